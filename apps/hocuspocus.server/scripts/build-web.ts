/**
 * Builds the web editor's bundle into its cache at install (postinstall), so the first page a server
 * serves does not wait for it. A failure here is reported and ignored: the server builds it on first use.
 */
import { buildWebBundle } from '../src/http/web-bundle.ts'

try {
  const dir = await buildWebBundle()
  console.log(`web editor bundle: ${dir}`)
} catch (error) {
  console.warn(
    `web editor bundle not built now (the server builds it on first use): ${(error as Error).message}`,
  )
}
