/**
 * The tool surface as a live server lists it over real HTTP, against docs/mcp/tools-list.json, the file
 * `bun run docs:reference` writes: a change of a tool's name, description, arguments or annotations is
 * a visible diff of that file in review. The expected answer is the checked-in file, never made here.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { useMcpClients } from '@collab/test-support/mcp'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { RunningServer } from '../../../server.ts'
import { ROOT } from '../reference/sections.ts'
import { TOOLS_LIST_PATH } from '../reference/tools-list.ts'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
const clients = useMcpClients(() => server)

const checkedIn = (JSON.parse(readFileSync(resolve(ROOT, TOOLS_LIST_PATH), 'utf8')) as { tools: Tool[] })
  .tools
const RERUN = `the live tools/list differs from ${TOOLS_LIST_PATH}; if the change is meant, run \`bun run docs:reference\` and review the diff`

describe('tools/list snapshot', () => {
  test('a read and write token lists exactly the checked-in tools', async () => {
    const { client } = await clients.user(handle('alice'), ['read', 'write'])
    const { tools } = await client.listTools()
    expect(tools, RERUN).toEqual(checkedIn)
  })

  test('a read token lists exactly the checked-in read-only tools, unchanged', async () => {
    const { client } = await clients.user(handle('rita'), ['read'])
    const { tools } = await client.listTools()
    expect(tools, RERUN).toEqual(checkedIn.filter((tool) => tool.annotations?.readOnlyHint === true))
  })
})
