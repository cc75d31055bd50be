// Drives a Table endpoint through Microsoft's legacy Node SDK (azure-storage 2.10.7):
// tables, an entity of every EDM type, a paged query, a batch (sent with an Atom outer
// Accept), the table ACL, a service SAS, an account SAS, a stored access policy, service
// properties and stats (on the secondary location) and a CORS preflight. The connection
// string comes from CONFORM_CONNECTION_STRING; the table name from CONFORM_TABLE. Exits
// non-zero with one line on the first surprise.
"use strict";
const azure = require("azure-storage");

const conn = process.env.CONFORM_CONNECTION_STRING;
const table = process.env.CONFORM_TABLE || "cflegacycheck";
if (!conn) {
  console.error("CONFORM_CONNECTION_STRING is not set");
  process.exit(2);
}
const field = (name) => (conn.match(new RegExp(name + "=([^;]+)")) || [])[1];
const account = field("AccountName");
const key = field("AccountKey");
const endpoint = field("TableEndpoint");
const eg = azure.TableUtilities.entityGenerator;

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

// call runs a callback-style method of obj and resolves with its result and response.
function call(obj, method, ...args) {
  return new Promise((resolve, reject) => {
    obj[method](...args, (err, result, response) => (err ? reject(err) : resolve({ result, response })));
  });
}

async function refused(promise, status, what) {
  try {
    await promise;
  } catch (err) {
    check(err.statusCode === status, `${what}: status ${err.statusCode}, want ${status}`);
    return;
  }
  throw new Error(`check failed: ${what} was not refused`);
}

async function main() {
  const svc = azure.createTableService(conn);
  await call(svc, "createTable", table);
  try {
    // An entity of every EDM type; the SDK sends doubles as strings with a type annotation.
    const when = new Date("2021-04-01T01:01:01.123Z");
    await call(svc, "insertEntity", table, {
      PartitionKey: eg.String("e"), RowKey: eg.String("types"), Bin: eg.Binary(Buffer.from([1, 0, 255])), Bool: eg.Boolean(true),
      When: eg.DateTime(when), Dbl: eg.Double(2.5), Id: eg.Guid("4185404a-5818-48c3-b9be-f217df0dba6f"), I32: eg.Int32(-7),
      I64: eg.Int64("-9007199254740993"), Str: eg.String("héllo"),
    });
    const got = (await call(svc, "retrieveEntity", table, "e", "types")).result;
    check(Buffer.from(got.Bin._).equals(Buffer.from([1, 0, 255])), "Binary: " + JSON.stringify(got.Bin));
    check(got.Bool._ === true, "Boolean: " + JSON.stringify(got.Bool));
    check(got.When._.getTime() === when.getTime(), "DateTime: " + JSON.stringify(got.When));
    check(Number(got.Dbl._) === 2.5, "Double: " + JSON.stringify(got.Dbl));
    check(got.Id._ === "4185404a-5818-48c3-b9be-f217df0dba6f", "Guid: " + JSON.stringify(got.Id));
    check(got.I32._ === -7, "Int32: " + JSON.stringify(got.I32));
    check(got.I64._ === "-9007199254740993", "Int64: " + JSON.stringify(got.I64));
    check(got.Str._ === "héllo", "String: " + JSON.stringify(got.Str));

    // A batch, then a query of 10 entities in pages of 4.
    const batch = new azure.TableBatch();
    for (let i = 0; i < 10; i++) {
      batch.insertEntity({ PartitionKey: eg.String("q"), RowKey: eg.String(String(i).padStart(2, "0")), N: eg.Int32(i) });
    }
    const br = (await call(svc, "executeBatch", table, batch)).result;
    check(br.length === 10 && br.every((r) => !r.error), "batch: " + JSON.stringify(br.map((r) => r.response && r.response.statusCode)));
    const query = new azure.TableQuery().where("PartitionKey eq ?", "q").top(4);
    let token = null;
    let pages = 0;
    let seen = 0;
    do {
      const r = (await call(svc, "queryEntities", table, query, token)).result;
      pages++;
      seen += r.entries.length;
      token = r.continuationToken;
    } while (token);
    check(pages === 3 && seen === 10, `paged query: ${pages} pages, ${seen} entities`);

    // Table ACL and a stored access policy that a SAS names.
    const start = new Date(Date.now() - 3600e3);
    const expiry = new Date(Date.now() + 3600e3);
    await call(svc, "setTableAcl", table, { readers: { Permissions: "r", Start: start, Expiry: expiry } });
    const acl = (await call(svc, "getTableAcl", table)).result;
    check(acl.signedIdentifiers.readers && acl.signedIdentifiers.readers.Permissions === "r", "table ACL: " + JSON.stringify(acl.signedIdentifiers));
    const viaPolicy = azure.createTableServiceWithSas(endpoint, svc.generateSharedAccessSignature(table, { Id: "readers" }));
    check((await call(viaPolicy, "retrieveEntity", table, "e", "types")).result.RowKey._ === "types", "get through the policy SAS");
    await refused(call(viaPolicy, "insertEntity", table, { PartitionKey: eg.String("e"), RowKey: eg.String("policy") }), 403, "insert through a read policy SAS");

    // A service SAS and an account SAS.
    const sas = svc.generateSharedAccessSignature(table, { AccessPolicy: { Permissions: "ra", Start: start, Expiry: expiry } });
    const viaSas = azure.createTableServiceWithSas(endpoint, sas);
    await call(viaSas, "insertEntity", table, { PartitionKey: eg.String("e"), RowKey: eg.String("sas") });
    await refused(call(viaSas, "deleteEntity", table, { PartitionKey: eg.String("e"), RowKey: eg.String("sas") }), 403, "delete through a service SAS without d");
    const accountSas = azure.generateAccountSharedAccessSignature(account, key, {
      AccessPolicy: { Services: "t", ResourceTypes: "co", Permissions: "rl", Start: start, Expiry: expiry, Protocols: "https,http" },
    });
    const viaAccount = azure.createTableServiceWithSas(endpoint, accountSas);
    check((await call(viaAccount, "retrieveEntity", table, "e", "sas")).result.RowKey._ === "sas", "get through the account SAS");
    await refused(call(viaAccount, "insertEntity", table, { PartitionKey: eg.String("e"), RowKey: eg.String("acct") }), 403, "insert through a read-only account SAS");

    // Service properties (put back afterwards), stats on the secondary location, CORS.
    const old = (await call(svc, "getServiceProperties")).result;
    const rule = { AllowedOrigins: ["https://conform.example"], AllowedMethods: ["GET", "PUT"], AllowedHeaders: ["x-ms-client-request-id"], ExposedHeaders: ["x-ms-meta-*"], MaxAgeInSeconds: 60 };
    await call(svc, "setServiceProperties", { Cors: { CorsRule: [rule] }, HourMetrics: { Version: "1.0", Enabled: true, IncludeAPIs: false, RetentionPolicy: { Enabled: true, Days: 4 } } });
    try {
      const props = (await call(svc, "getServiceProperties")).result;
      check(props.Cors.CorsRule.length === 1 && props.Cors.CorsRule[0].AllowedOrigins[0] === "https://conform.example" && props.HourMetrics.RetentionPolicy.Days === 4,
        "service properties: " + JSON.stringify(props));
      const secondary = azure.createTableService(account, key, { primaryHost: endpoint, secondaryHost: endpoint + "-secondary" });
      const stats = (await call(secondary, "getServiceStats", { locationMode: azure.StorageUtilities.LocationMode.SECONDARY_ONLY })).result;
      check(stats.GeoReplication && stats.GeoReplication.Status === "live", "service stats: " + JSON.stringify(stats));
      const pre = await fetch(endpoint + "/Tables", { method: "OPTIONS", headers: { Origin: "https://conform.example", "Access-Control-Request-Method": "GET" } });
      check(pre.status === 200 && pre.headers.get("access-control-allow-origin") === "https://conform.example", `CORS preflight: ${pre.status}`);
    } finally {
      await call(svc, "setServiceProperties", old);
    }
  } finally {
    await call(svc, "deleteTable", table);
  }
  console.log("legacy-node-check: ok");
}

main().catch((err) => {
  console.error("legacy-node-check: " + (err && err.message ? err.message : String(err)));
  process.exit(1);
});
