/** Users: a handle people and agents see, and an optional display name. */

import { ok, type Result, refuse } from '@collab/doc-schema'
import type { PrismaClient } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { MAX_NAME_CHARS } from '../limits.ts'

export const HANDLE_PATTERN = /^[a-z0-9][a-z0-9_-]{1,31}$/

export type UserRecord = { id: string; handle: string; name: string | null; createdAt: Date }

export function checkHandle(raw: string): Result<string> {
  const handle = raw.trim().toLowerCase()
  if (!HANDLE_PATTERN.test(handle)) {
    return refuse(
      'invalid_input',
      `HANDLE: "${raw}" must be 2-32 characters: lowercase letters, digits, _ or -, starting with a letter or digit`,
      'HANDLE',
    )
  }
  return ok(handle)
}

export function createUsersService(prisma: PrismaClient) {
  return {
    async add(rawHandle: string, name?: string): Promise<Result<UserRecord>> {
      const handle = checkHandle(rawHandle)
      if (handle.kind === 'error') return handle
      const cleanName = (name === undefined ? '' : storableText(name).trim()) || null
      if (cleanName && cleanName.length > MAX_NAME_CHARS) {
        return refuse('invalid_input', `--name: at most ${MAX_NAME_CHARS} characters`, '--name')
      }
      const existing = await prisma.user.findUnique({ where: { handle: handle.value } })
      if (existing)
        return refuse(
          'conflict',
          `HANDLE: a user "${handle.value}" already exists; pick another handle`,
          'HANDLE',
        )
      try {
        return ok(await prisma.user.create({ data: { handle: handle.value, name: cleanName } }))
      } catch (error) {
        if ((error as { code?: string }).code === 'P2002') {
          return refuse(
            'conflict',
            `HANDLE: a user "${handle.value}" already exists; pick another handle`,
            'HANDLE',
          )
        }
        throw error
      }
    },

    async byHandle(rawHandle: string): Promise<Result<UserRecord>> {
      const handle = rawHandle.trim().toLowerCase()
      const user = HANDLE_PATTERN.test(handle) ? await prisma.user.findUnique({ where: { handle } }) : null
      return user
        ? ok(user)
        : refuse(
            'not_found',
            `HANDLE: no user "${rawHandle}"; list users with: bun run cli -- user list`,
            'HANDLE',
          )
    },

    async byId(id: string): Promise<UserRecord | null> {
      return prisma.user.findUnique({ where: { id } })
    },

    list(): Promise<UserRecord[]> {
      return prisma.user.findMany({ orderBy: [{ createdAt: 'asc' }, { handle: 'asc' }] })
    },

    count(): Promise<number> {
      return prisma.user.count()
    },
  }
}

export type UsersService = ReturnType<typeof createUsersService>
