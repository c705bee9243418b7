/**
 * The order db copy inserts tables in (parents before the tables whose foreign keys refer to them), and
 * its refusal of a cycle, which no insert order satisfies; without I/O. The copy itself, on real data:
 * db-copy.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { parentsFirst, type Table } from '../db/copy/catalog.ts'
import { redactedUrl } from '../db/copy/connections.ts'

const table = (name: string): Table => ({ name, columns: [], key: [] })
const names = (tables: Table[]) => tables.map((t) => t.name)

describe('db copy: table order', () => {
  test('every table comes after the tables it refers to, whatever order the catalog lists them in', () => {
    const tables = ['chat_messages', 'chat_rooms', 'documents', 'users', 'api_tokens'].map(table)
    const references = [
      ['chat_messages', 'chat_rooms'],
      ['chat_messages', 'users'],
      ['chat_rooms', 'documents'],
      ['documents', 'users'],
      ['api_tokens', 'users'],
    ] as const
    const order = names(parentsFirst(tables, references))
    expect(order).toHaveLength(tables.length)
    for (const [child, parent] of references) expect(order.indexOf(parent)).toBeLessThan(order.indexOf(child))
  })

  test("a table's reference to itself is left to its rows; a cycle between tables is refused by name", () => {
    expect(names(parentsFirst([table('a')], [['a', 'a']]))).toEqual(['a'])
    expect(() =>
      parentsFirst(['a', 'b', 'c'].map(table), [
        ['a', 'b'],
        ['b', 'a'],
      ]),
    ).toThrow('tables a, b refer to each other in a cycle')
  })

  test('a target URL is shown without its password', () => {
    expect(redactedUrl('postgresql://collab:s3cret@db.example:5432/collab')).toBe(
      'postgresql://collab:***@db.example:5432/collab',
    )
    expect(redactedUrl('not a url')).toBe('(an unparsable URL)')
  })
})
