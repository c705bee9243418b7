/**
 * test-support's shared server (one per test process, for the files that opt in): two shares, as two
 * files take them, are the one server, and the same user handle asked by both names two users, so files
 * on it cannot collide.
 */
import { expect, test } from 'bun:test'
import { userWithToken } from '@collab/test-support/server'
import { type ServerShare, useSharedServer } from '@collab/test-support/shared-server'

let first: ServerShare
let second: ServerShare
useSharedServer((share) => {
  first = share
})
useSharedServer((share) => {
  second = share
})

test("two files' shares are one server; 'alice' in each is a user of its own", async () => {
  expect(second.server).toBe(first.server)
  expect(first.handle('alice')).not.toBe(second.handle('alice'))
  const a = await userWithToken(first.server, first.handle('alice'))
  const b = await userWithToken(second.server, second.handle('alice'))
  expect(a.user.id).not.toBe(b.user.id)
  expect(a.user.handle).toStartWith('alice-')
})
