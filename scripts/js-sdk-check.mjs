// Drives a Table endpoint through the JavaScript SDK (@azure/data-tables): create table,
// insert, upsert, merge, replace, point get, filtered and paged queries, a transaction and
// delete. The connection string comes from CONFORM_CONNECTION_STRING; the table name from
// CONFORM_TABLE. Exits non-zero with one line on the first surprise.
import { TableClient, TableServiceClient, odata } from "@azure/data-tables";

const conn = process.env.CONFORM_CONNECTION_STRING;
const table = process.env.CONFORM_TABLE || "cfjscheck";
if (!conn) {
  console.error("CONFORM_CONNECTION_STRING is not set");
  process.exit(2);
}
const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const service = TableServiceClient.fromConnectionString(conn, opts);
const client = TableClient.fromConnectionString(conn, table, opts);

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
  } finally {
    await service.deleteTable(table);
  }
  console.log("js-sdk-check: ok");
}

main().catch((err) => {
  console.error("js-sdk-check: " + (err && err.message ? err.message : String(err)));
  process.exit(1);
});
