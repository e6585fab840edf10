// PGlite (PostgreSQL compiled to WASM) with the pgvector extension, served
// on a loopback port by @electric-sql/pglite-socket, for the PostgreSQL
// backend's pgvector conformance run (scripts/pg-test.sh starts and stops
// it). PGlite is one backend: queries from its connections are queued one
// at a time (a few connections are accepted so that a reconnect racing the
// previous close is not refused; tests use a pool of one). It has no COPY.
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

const port = Number(process.env.PGLITE_PORT || 55433)
const db = await PGlite.create({ extensions: { vector } })
await db.exec('CREATE EXTENSION IF NOT EXISTS vector')
const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 4 })
await server.start()
console.log(`ready ${port}`)
const stop = async () => {
  await server.stop()
  await db.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
