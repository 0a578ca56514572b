// Drives VS Code (code-server, in headless Chromium) as a user would: opens FetchRequest.json, shows the
// Problems panel and hovers the renamed field; prints both and saves screenshots. See README.md here.
const { chromium } = require("playwright-core");

const folder = process.argv[2];
const shots = process.argv[3] || ".";
const wait = (page, ms) => page.waitForTimeout(ms);

(async () => {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:8088/?folder=${folder}`, { waitUntil: "domcontentloaded" });
  await page.waitForSelector(".monaco-workbench", { timeout: 60000 });
  await wait(page, 8000);
  await page.keyboard.press("Control+P");
  await wait(page, 1500);
  await page.keyboard.type("FetchRequest.json");
  await wait(page, 1500);
  await page.keyboard.press("Enter");
  await wait(page, 15000);
  await page.keyboard.press("Control+Shift+M");
  await wait(page, 4000);
  console.log("PROBLEMS:\n" + await page.locator(".markers-panel").innerText());
  await page.keyboard.press("Control+G");
  await wait(page, 800);
  await page.keyboard.type("75:20");
  await page.keyboard.press("Enter");
  await wait(page, 1000);
  await page.keyboard.press("Control+K");
  await page.keyboard.press("Control+I");
  await wait(page, 4000);
  console.log("HOVER:\n" + await page.locator(".monaco-hover").innerText());
  await page.screenshot({ path: `${shots}/vscode-hover.jpg`, type: "jpeg", quality: 80,
                         clip: { x: 340, y: 40, width: 1060, height: 640 } });
  await browser.close();
})().catch((error) => { console.error(error); process.exit(1); });
