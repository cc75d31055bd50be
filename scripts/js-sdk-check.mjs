// Drives a Table endpoint through the JavaScript SDK (@azure/data-tables): create table,
// insert, upsert, merge, replace, point get, an entity of every EDM type, filtered and
// paged queries, a transaction, the table ACL, a service SAS, an account SAS, a stored
// access policy, service properties and stats, a CORS preflight and delete. The
// connection string comes from CONFORM_CONNECTION_STRING; the table name from
// CONFORM_TABLE. Exits non-zero with one line on the first surprise.
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  generateAccountSas,
  generateTableSas,
  odata,
} from "@azure/data-tables";

const conn = process.env.CONFORM_CONNECTION_STRING;
const table = process.env.CONFORM_TABLE || "cfjscheck";
if (!conn) {
  console.error("CONFORM_CONNECTION_STRING is not set");
  process.exit(2);
}
const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const service = TableServiceClient.fromConnectionString(conn, opts);
const client = TableClient.fromConnectionString(conn, table, opts);

const field = (name) => (conn.match(new RegExp(name + "=([^;]+)")) || [])[1];
const endpoint = field("TableEndpoint");
// Over https the SAS tokens carry spr=https, as SDKs issue them by default; over plain
// HTTP they must allow http too.
const sasProtocol = endpoint.startsWith("https:") ? "https" : "https,http";
const credential = new AzureNamedKeyCredential(field("AccountName"), field("AccountKey"));

async function refused(promise, status, what) {
  try {
    await promise;
  } catch (err) {
    check(err.statusCode === status, `${what}: status ${err.statusCode}, want ${status}`);
    return;
  }
  throw new Error(`check failed: ${what} was not refused`);
}

function check(cond, what) {
  if (!cond) {
    throw new Error("check failed: " + what);
  }
}

async function main() {
  await service.createTable(table);
  try {
    await client.createEntity({ partitionKey: "p", rowKey: "1", name: "one", n: 1, big: { value: "9007199254740993", type: "Int64" } });
    await client.upsertEntity({ partitionKey: "p", rowKey: "2", name: "two", n: 2 }, "Replace");
    await client.upsertEntity({ partitionKey: "p", rowKey: "2", extra: true }, "Merge");
    let e = await client.getEntity("p", "2");
    check(e.name === "two" && e.extra === true, "merge kept name and added extra: " + JSON.stringify(e));
    await client.updateEntity({ partitionKey: "p", rowKey: "2", name: "deux" }, "Replace", { etag: e.etag });
    e = await client.getEntity("p", "2");
    check(e.name === "deux" && e.extra === undefined, "replace removed extra: " + JSON.stringify(e));
    e = await client.getEntity("p", "1", { disableTypeConversion: true });
    check(e.big && e.big.value === "9007199254740993" && e.big.type === "Int64", "Int64 round trip: " + JSON.stringify(e.big));
    for (let i = 3; i <= 12; i++) {
      await client.createEntity({ partitionKey: "q", rowKey: String(i).padStart(3, "0"), n: i });
    }
    const filtered = [];
    for await (const x of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"q"} and n ge ${5}` } })) {
      filtered.push(x.rowKey);
    }
    check(filtered.join(",") === "005,006,007,008,009,010,011,012", "filtered query: " + filtered.join(","));
    let pages = 0;
    let seen = 0;
    for await (const page of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"q"}` } }).byPage({ maxPageSize: 4 })) {
      pages++;
      seen += page.length;
    }
    check(pages === 3 && seen === 10, `paged query: ${pages} pages, ${seen} entities`);
    await client.submitTransaction([
      ["create", { partitionKey: "t", rowKey: "a", v: 1 }],
      ["create", { partitionKey: "t", rowKey: "b", v: 2 }],
      ["upsert", { partitionKey: "t", rowKey: "c", v: 3 }, "Merge"],
    ]);
    const txn = [];
    for await (const x of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"t"}` } })) {
      txn.push(x.rowKey);
    }
    check(txn.join(",") === "a,b,c", "transaction: " + txn.join(","));
    await client.deleteEntity("p", "1");
    let missing = false;
    try {
      await client.getEntity("p", "1");
    } catch (err) {
      missing = err.statusCode === 404;
    }
    check(missing, "deleted entity is gone");

    // An entity of every EDM type.
    const when = new Date("2021-04-01T01:01:01.123Z");
    await client.createEntity({
      partitionKey: "e", rowKey: "types", bin: new Uint8Array([1, 0, 255]), bool: true, when, dbl: 1.5,
      id: { value: "4185404a-5818-48c3-b9be-f217df0dba6f", type: "Guid" }, i32: -7,
      i64: { value: "-9007199254740993", type: "Int64" }, str: "héllo",
    });
    const typed = await client.getEntity("e", "types", { disableTypeConversion: true });
    check(typed.bin.type === "Binary" && typed.bin.value === "AQD/", "Binary: " + JSON.stringify(typed.bin));
    check(typed.bool.value === "true" && typed.bool.type === "Boolean", "Boolean: " + JSON.stringify(typed.bool));
    check(typed.when.type === "DateTime" && new Date(typed.when.value).getTime() === when.getTime(), "DateTime: " + JSON.stringify(typed.when));
    check(typed.dbl.type === "Double" && Number(typed.dbl.value) === 1.5, "Double: " + JSON.stringify(typed.dbl));
    check(typed.id.type === "Guid" && typed.id.value === "4185404a-5818-48c3-b9be-f217df0dba6f", "Guid: " + JSON.stringify(typed.id));
    check(typed.i32.type === "Int32" && Number(typed.i32.value) === -7, "Int32: " + JSON.stringify(typed.i32));
    check(typed.i64.type === "Int64" && typed.i64.value === "-9007199254740993", "Int64: " + JSON.stringify(typed.i64));
    check(typed.str.type === "String" && typed.str.value === "héllo", "String: " + JSON.stringify(typed.str));

    // Table ACL and a stored access policy that a SAS names.
    const start = new Date(Date.now() - 3600e3);
    const expiry = new Date(Date.now() + 3600e3);
    await client.setAccessPolicy([{ id: "readers", accessPolicy: { start, expiry, permission: "r" } }]);
    const acl = await client.getAccessPolicy();
    check(acl.length === 1 && acl[0].id === "readers" && acl[0].accessPolicy.permission === "r",
      "table ACL: " + JSON.stringify(acl));
    const policySas = generateTableSas(table, credential, { identifier: "readers" });
    const viaPolicy = new TableClient(endpoint, table, new AzureSASCredential(policySas), opts);
    check((await viaPolicy.getEntity("e", "types")).rowKey === "types", "get through the policy SAS");
    await refused(viaPolicy.createEntity({ partitionKey: "e", rowKey: "policy" }), 403, "insert through a read policy SAS");

    // A service SAS and an account SAS (spr as sasProtocol says).
    const tableSas = generateTableSas(table, credential, { permissions: { query: true, add: true }, expiresOn: expiry, protocol: sasProtocol });
    check(new URLSearchParams(tableSas).get("spr") === sasProtocol, "the service SAS's spr: " + new URLSearchParams(tableSas).get("spr"));
    const viaSas = new TableClient(endpoint, table, new AzureSASCredential(tableSas), opts);
    await viaSas.createEntity({ partitionKey: "e", rowKey: "sas" });
    await refused(viaSas.deleteEntity("e", "sas"), 403, "delete through a service SAS without d");
    const accountSas = generateAccountSas(credential, { permissions: { query: true, list: true }, resourceTypes: "co", expiresOn: expiry, protocol: sasProtocol });
    const viaAccount = new TableClient(endpoint, table, new AzureSASCredential(accountSas), opts);
    check((await viaAccount.getEntity("e", "sas")).rowKey === "sas", "get through the account SAS");
    await refused(viaAccount.createEntity({ partitionKey: "e", rowKey: "account" }), 403, "insert through a read-only account SAS");

    // Service properties (put back afterwards), stats on the secondary location, CORS.
    const old = await service.getProperties();
    const rule = { allowedOrigins: "https://conform.example", allowedMethods: "GET,PUT", allowedHeaders: "x-ms-client-request-id", exposedHeaders: "x-ms-meta-*", maxAgeInSeconds: 60 };
    await service.setProperties({ cors: [rule], minuteMetrics: { version: "1.0", enabled: true, includeAPIs: false, retentionPolicy: { enabled: true, days: 3 } } });
    try {
      const props = await service.getProperties();
      check(props.cors.length === 1 && props.cors[0].allowedOrigins === rule.allowedOrigins && props.minuteMetrics.retentionPolicy.days === 3,
        "service properties: " + JSON.stringify(props));
      await refused(service.setProperties({ cors: [rule, rule, rule, rule, rule, rule] }), 400, "six CORS rules");
      // The SDK finds the secondary by the host's first label, so the endpoint is named by
      // host name, with the account in the path.
      const secondary = new TableServiceClient(endpoint.replace("127.0.0.1", "localhost") + "-secondary", credential, opts);
      const stats = await secondary.getStatistics();
      check(stats.geoReplication && stats.geoReplication.status === "live", "service stats: " + JSON.stringify(stats));
      const pre = await fetch(endpoint + "/Tables", { method: "OPTIONS", headers: { Origin: "https://conform.example", "Access-Control-Request-Method": "PUT" } });
      check(pre.status === 200 && pre.headers.get("access-control-allow-origin") === "https://conform.example" && pre.headers.get("access-control-max-age") === "60",
        `CORS preflight: ${pre.status}`);
      const no = await fetch(endpoint + "/Tables", { method: "OPTIONS", headers: { Origin: "https://elsewhere.example", "Access-Control-Request-Method": "PUT" } });
      check(no.status === 403, `CORS preflight from another origin: ${no.status}`);
    } finally {
      await service.setProperties(old);
    }
  } finally {
    await service.deleteTable(table);
  }
  console.log("js-sdk-check: ok");
}

main().catch((err) => {
  console.error("js-sdk-check: " + (err && err.message ? err.message : String(err)));
  process.exit(1);
});
