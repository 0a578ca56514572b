"""Minimal copies of Kafka's RequestHeader and ResponseHeader specs, for tests that frame messages."""

REQUEST_HEADER = {"name": "RequestHeader", "type": "header", "validVersions": "0-2", "flexibleVersions": "2+",
                  "fields": [{"name": "RequestApiKey", "type": "int16", "versions": "0+"},
                             {"name": "RequestApiVersion", "type": "int16", "versions": "0+"},
                             {"name": "CorrelationId", "type": "int32", "versions": "0+"},
                             {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+",
                              "flexibleVersions": "none"}]}
RESPONSE_HEADER = {"name": "ResponseHeader", "type": "header", "validVersions": "0-1", "flexibleVersions": "1+",
                   "fields": [{"name": "CorrelationId", "type": "int32", "versions": "0+"}]}
