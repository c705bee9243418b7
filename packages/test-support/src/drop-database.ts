/** Dropping a test database on PostgreSQL; its own module so the shared server's reaper loads only `pg`. */
import { Client } from 'pg'

/**
 * DROP DATABASE … WITH (FORCE), tried again for a few seconds: FORCE cannot end an autovacuum worker
 * (it runs as a superuser), so a drop that meets one fails with "must be a member of the role whose
 * process is being terminated" until the worker is done.
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const c = new Client({ connectionString: serverUrl })
    await c.connect()
    try {
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      return
    } catch (error) {
      if (attempt >= 20) throw error
    } finally {
      await c.end()
    }
    await Bun.sleep(500)
  }
}
