/**
 * CLI commands as plain functions over the services, so they run the same in the CLI process and inside
 * a running server (see admin-channel.ts). Output goes through `io`; bad input is one line on stderr and
 * exit code 2.
 */

import { basename, extname } from 'node:path'
import { parseArgs } from 'node:util'
import { createAccountsService, INVITE_TTL_MS } from '../auth/accounts.ts'
import { parseScopes } from '../auth/tokens.ts'
import { loadConfig } from '../config.ts'
import { applyMigrations, migrationStatus } from '../db/migrations.ts'
import type { Result } from '../errors.ts'
import type { Services } from '../services.ts'

export type CommandIO = { out(text: string): void; err(text: string): void }
/** argv after `cli --`; files holds the contents of files the command names, read by the calling process. */
export type CommandRequest = { argv: string[]; files?: Record<string, string> }

export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>
type Command = {
  usage: string
  summary: string
  options: OptionSpec
  positionals: string[]
  run(ctx: {
    args: string[]
    opts: Record<string, string | boolean | undefined>
    services: Services
    io: CommandIO
    files: Record<string, string>
  }): Promise<number>
}

class UsageError extends Error {}

function unwrap<T>(result: Result<T>): T {
  if (result.kind === 'error') {
    throw result.code === 'invalid_input' || result.code === 'not_found' || result.code === 'conflict'
      ? new UsageError(result.message)
      : new Error(result.message)
  }
  return result.value
}

const table = (rows: string[][]): string => {
  if (rows.length === 0) return ''
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return `${rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n')}\n`
}
const when = (d: Date | null) => (d ? d.toISOString().replace(/\.\d+Z$/, 'Z') : '-')

/** Where people reach the server (PUBLIC_URL, else the listening address), for links the CLI prints. */
function publicBase(): string {
  try {
    const config = loadConfig()
    return (
      config.publicUrl ??
      `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
    )
  } catch {
    return 'http://127.0.0.1:4000'
  }
}

/** --owner's user; without it the only user there is (a fresh install has one, see first-run.ts). */
async function ownerFor(services: Services, handle: string | undefined) {
  if (handle) return unwrap(await services.users.byHandle(handle))
  const users = await services.users.list()
  if (users.length === 1) return users[0]!
  throw new UsageError(
    `--owner: required when there is more than one user (the HANDLE of the user who will own the document; \`user list\` shows them)`,
  )
}

const commands: Record<string, Command> = {
  'user add': {
    usage: 'user add HANDLE [--name NAME]',
    summary: 'Create a user.',
    options: { name: { type: 'string' } },
    positionals: ['HANDLE'],
    async run({ args, opts, services, io }) {
      const user = unwrap(await services.users.add(args[0]!, opts.name as string | undefined))
      io.out(`${user.handle}\n`)
      return EXIT_OK
    },
  },
  'user list': {
    usage: 'user list',
    summary: 'List users (SIGN-IN: whether they have a password for the sign-in page).',
    options: {},
    positionals: [],
    async run({ services, io }) {
      const users = await services.users.list()
      const signIn = await createAccountsService(services.db.prisma).withPassword()
      io.out(
        table([
          ['HANDLE', 'NAME', 'CREATED', 'SIGN-IN'],
          ...users.map((u) => [
            u.handle,
            u.name ?? '-',
            when(u.createdAt),
            signIn.has(u.id) ? 'password' : '-',
          ]),
        ]),
      )
      return EXIT_OK
    },
  },
  'user set-password': {
    usage: 'user set-password HANDLE FILE',
    summary:
      "Set a user's sign-in password from the first line of FILE (/dev/stdin to pipe it; never an argument). Signs their browsers out.",
    options: {},
    positionals: ['HANDLE', 'FILE'],
    async run({ args, services, io, files }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const content = files[args[1]!]
      if (content === undefined) throw new UsageError(`FILE: cannot read "${args[1]}"`)
      const password = content.split(/\r?\n/)[0] ?? ''
      unwrap(await createAccountsService(services.db.prisma).setPassword(user.id, password))
      io.out(`${user.handle}: password set; sign in at ${publicBase()}/sign-in\n`)
      return EXIT_OK
    },
  },
  'user invite': {
    usage: 'user invite HANDLE',
    summary: `Print a link that lets the user choose their own password (works once, for ${INVITE_TTL_MS / 86_400_000} days).`,
    options: {},
    positionals: ['HANDLE'],
    async run({ args, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const invite = await createAccountsService(services.db.prisma).createInvite(user.id)
      io.out(`${publicBase()}/invite/${invite.token}\n`)
      io.err(
        `Invite for ${user.handle}, valid until ${when(invite.expiresAt)}. Send it privately: it sets their password.\n`,
      )
      return EXIT_OK
    },
  },
  'app list': {
    usage: 'app list HANDLE',
    summary: 'List the apps (OAuth clients) a user connected, with what they may do.',
    options: {},
    positionals: ['HANDLE'],
    async run({ args, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const apps = await createAccountsService(services.db.prisma).apps(user.id)
      io.out(
        table([
          ['CLIENT_ID', 'SCOPES', 'CONNECTED', 'REDIRECTS TO', 'NAME'],
          ...apps.map((a) => [
            a.clientId,
            a.scopes.join(','),
            when(a.connectedAt),
            a.redirectHosts.join(','),
            a.name,
          ]),
        ]),
      )
      return EXIT_OK
    },
  },
  'app revoke': {
    usage: 'app revoke HANDLE CLIENT_ID',
    summary: 'Disconnect an app from a user: its tokens stop working at the next call.',
    options: {},
    positionals: ['HANDLE', 'CLIENT_ID'],
    async run({ args, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const revoked = unwrap(await createAccountsService(services.db.prisma).revokeApp(user.id, args[1]!))
      io.out(`revoked ${args[1]} for ${user.handle} (${revoked.tokens} tokens)\n`)
      return EXIT_OK
    },
  },
  'token issue': {
    usage: 'token issue HANDLE [--scope read|write|read,write] [--label TEXT] [--expires-days N]',
    summary: 'Issue an API token; prints it once on stdout (and nothing else).',
    options: { scope: { type: 'string' }, label: { type: 'string' }, 'expires-days': { type: 'string' } },
    positionals: ['HANDLE'],
    async run({ args, opts, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const scopes = unwrap(parseScopes((opts.scope as string | undefined) ?? 'read,write'))
      const daysRaw = opts['expires-days'] as string | undefined
      if (daysRaw !== undefined && !/^\d+$/.test(daysRaw)) {
        throw new UsageError(`--expires-days: "${daysRaw}" is not a whole number of days`)
      }
      const issued = unwrap(
        await services.tokens.issue(user.id, {
          scopes,
          label: opts.label as string | undefined,
          expiresDays: daysRaw === undefined ? undefined : Number(daysRaw),
        }),
      )
      io.out(`${issued.token}\n`)
      io.err(
        `Token ${issued.record.id} for ${user.handle} (${scopes.join(',')}). It is shown once: store it now.\n`,
      )
      return EXIT_OK
    },
  },
  'token list': {
    usage: 'token list HANDLE',
    summary: "List a user's tokens (never their secrets).",
    options: {},
    positionals: ['HANDLE'],
    async run({ args, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const now = new Date()
      const rows = (await services.tokens.list(user.id)).map((t) => [
        t.id,
        t.scopes.join(','),
        t.revokedAt ? 'revoked' : t.expiresAt && t.expiresAt <= now ? 'expired' : 'active',
        when(t.createdAt),
        when(t.lastUsedAt),
        when(t.expiresAt),
        t.label || '-',
      ])
      io.out(table([['ID', 'SCOPES', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES', 'LABEL'], ...rows]))
      return EXIT_OK
    },
  },
  'token revoke': {
    usage: 'token revoke ID',
    summary: 'Revoke a token; it stops working at once.',
    options: {},
    positionals: ['ID'],
    async run({ args, services, io }) {
      const token = unwrap(await services.tokens.revoke(args[0]!))
      io.out(`revoked ${token.id}\n`)
      return EXIT_OK
    },
  },
  'doc import': {
    usage: 'doc import FILE.md [--owner HANDLE] [--title TITLE] [--private|--public]',
    summary:
      'Create a document from a Markdown file (up to 24 MiB; private unless --public); prints its slug. See docs/document-model.md, "Importing a file".',
    options: {
      owner: { type: 'string' },
      title: { type: 'string' },
      public: { type: 'boolean' },
      private: { type: 'boolean' },
    },
    positionals: ['FILE'],
    async run({ args, opts, services, io, files }) {
      if (opts.public && opts.private) throw new UsageError('--public and --private: pick one')
      const content = files[args[0]!]
      if (content === undefined) throw new UsageError(`FILE: cannot read "${args[0]}"`)
      const owner = await ownerFor(services, opts.owner as string | undefined)
      const imported = unwrap(
        await services.documents.importMarkdown(owner.id, {
          markdown: content,
          title: opts.title as string | undefined,
          fallbackTitle: basename(args[0]!, extname(args[0]!)) || 'Untitled',
          isPrivate: !opts.public,
        }),
      )
      for (const change of imported.changes) io.err(`${change}\n`)
      io.out(`${imported.document.slug}\n`)
      return EXIT_OK
    },
  },
  'doc export': {
    usage: 'doc export SLUG [--out FILE.md]',
    summary: 'Write a document as Markdown (its title first as `# `) to stdout or FILE.md.',
    options: { out: { type: 'string' } },
    positionals: ['SLUG'],
    async run({ args, services, io }) {
      io.out(unwrap(await services.documents.markdownForAdmin(args[0]!)))
      return EXIT_OK
    },
  },
  'doc list': {
    usage: 'doc list [--owner HANDLE]',
    summary: 'List documents (all, or one owner’s).',
    options: { owner: { type: 'string' } },
    positionals: [],
    async run({ opts, services, io }) {
      const owner = opts.owner ? unwrap(await services.users.byHandle(opts.owner as string)) : undefined
      const docs = await services.documents.listAll(owner?.id)
      const rows = docs.map((d) => [
        d.slug,
        d.ownerHandle,
        [d.isPrivate ? 'private' : 'public', d.readOnly ? 'read-only' : ''].filter(Boolean).join(','),
        when(d.contentUpdatedAt),
        d.title,
      ])
      io.out(table([['SLUG', 'OWNER', 'FLAGS', 'UPDATED', 'TITLE'], ...rows]))
      return EXIT_OK
    },
  },
  'doc share': {
    usage: 'doc share SLUG HANDLE --role editor|viewer',
    summary: 'Make a user a member of a document (or change their role).',
    options: { role: { type: 'string' } },
    positionals: ['SLUG', 'HANDLE'],
    async run({ args, opts, services, io }) {
      const role = opts.role
      if (role !== 'editor' && role !== 'viewer')
        throw new UsageError(`--role: "${role ?? ''}" must be editor or viewer`)
      const user = unwrap(await services.users.byHandle(args[1]!))
      const doc = unwrap(await services.documents.share(args[0]!, user.id, role))
      io.out(`${doc.slug}: ${user.handle} is ${role === 'editor' ? 'an editor' : 'a viewer'}\n`)
      return EXIT_OK
    },
  },
  'doc unshare': {
    usage: 'doc unshare SLUG HANDLE',
    summary: 'Remove a member from a document.',
    options: {},
    positionals: ['SLUG', 'HANDLE'],
    async run({ args, services, io }) {
      const user = unwrap(await services.users.byHandle(args[1]!))
      const { removed } = unwrap(await services.documents.unshare(args[0]!, user.id))
      io.out(
        removed ? `${args[0]}: ${user.handle} removed\n` : `${args[0]}: ${user.handle} was not a member\n`,
      )
      return EXIT_OK
    },
  },
  'doc set': {
    usage: 'doc set SLUG [--public|--private] [--read-only|--writable]',
    summary: 'Change a document’s visibility or read-only flag.',
    options: {
      public: { type: 'boolean' },
      private: { type: 'boolean' },
      'read-only': { type: 'boolean' },
      writable: { type: 'boolean' },
    },
    positionals: ['SLUG'],
    async run({ args, opts, services, io }) {
      if (opts.public && opts.private) throw new UsageError('--public and --private: pick one')
      if (opts['read-only'] && opts.writable) throw new UsageError('--read-only and --writable: pick one')
      const flags = {
        ...(opts.public || opts.private ? { isPrivate: Boolean(opts.private) } : {}),
        ...(opts['read-only'] || opts.writable ? { readOnly: Boolean(opts['read-only']) } : {}),
      }
      if (Object.keys(flags).length === 0)
        throw new UsageError('doc set: give at least one of --public, --private, --read-only, --writable')
      const doc = unwrap(await services.documents.setFlags(args[0]!, flags))
      io.out(`${doc.slug}: ${doc.isPrivate ? 'private' : 'public'}${doc.readOnly ? ', read-only' : ''}\n`)
      return EXIT_OK
    },
  },
  'doc delete': {
    usage: 'doc delete SLUG',
    summary: 'Delete a document (soft: it disappears for everyone; the data stays in the database).',
    options: {},
    positionals: ['SLUG'],
    async run({ args, services, io }) {
      const doc = unwrap(await services.documents.softDelete(args[0]!))
      io.out(`deleted ${doc.slug}\n`)
      return EXIT_OK
    },
  },
  'db migrate': {
    usage: 'db migrate',
    summary: 'Apply pending migrations from prisma/migrations.',
    options: {},
    positionals: [],
    async run({ services, io }) {
      const applied = await applyMigrations(services.db.adapterFactory, {
        onWarning: (m) => io.err(`${m}\n`),
      })
      io.out(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n')
      return EXIT_OK
    },
  },
  'db status': {
    usage: 'db status',
    summary: 'Show which migrations are applied, pending or failed.',
    options: {},
    positionals: [],
    async run({ services, io }) {
      const s = await migrationStatus(services.db.adapterFactory)
      io.out(`database: ${services.db.kind}\nmigrations: ${s.total}\n`)
      io.out(`pending: ${s.pending.length ? s.pending.join(', ') : 'none'}\n`)
      if (s.failed.length) io.out(`failed: ${s.failed.join(', ')}\n`)
      if (s.edited.length) io.out(`edited after being applied: ${s.edited.join(', ')}\n`)
      if (s.unknown.length) io.out(`applied but not in prisma/migrations: ${s.unknown.join(', ')}\n`)
      return s.pending.length || s.failed.length ? EXIT_FAILURE : EXIT_OK
    },
  },
}

export function helpText(): string {
  const lines = Object.values(commands).map((c) => `  ${c.usage.padEnd(82)} ${c.summary}`)
  return `usage: bun run cli -- COMMAND [options]   (every command takes --help)\n\ncommands:\n${lines.join('\n')}\n\nData: DATA_DIR (embedded, default ./.data) or DATABASE_URL (PostgreSQL), as for the server.\n`
}

/** The command named by argv, so the caller can tell which files it needs before running it. */
export function findCommand(argv: string[]): { key: string; rest: string[] } | null {
  const key = argv.slice(0, 2).join(' ')
  return commands[key] ? { key, rest: argv.slice(2) } : null
}

/** The file a command's output goes to (its --out option), written by the calling process; null for stdout. */
export function outputNamed(argv: string[]): string | null {
  const found = findCommand(argv)
  if (!found || !('out' in commands[found.key]!.options)) return null
  try {
    const { values } = parseArgs({
      args: found.rest,
      options: commands[found.key]!.options,
      allowPositionals: true,
      strict: true,
    })
    return typeof values.out === 'string' ? values.out : null
  } catch {
    return null // runCommand reports the usage error
  }
}

/**
 * Paths of the files a command names (its positionals called FILE), parsed with the command's own options
 * so an option value is never taken for a file. The calling process reads them (see CommandRequest).
 */
export function filesNamed(argv: string[]): string[] {
  const found = findCommand(argv)
  if (!found || found.rest.includes('--help') || found.rest.includes('-h')) return []
  const command = commands[found.key]!
  try {
    const { positionals } = parseArgs({
      args: found.rest,
      options: command.options,
      allowPositionals: true,
      strict: true,
    })
    return command.positionals.flatMap((name, i) =>
      name === 'FILE' && positionals[i] ? [positionals[i]] : [],
    )
  } catch {
    return [] // runCommand reports the usage error
  }
}

type Prepared =
  | { kind: 'answered'; exitCode: number }
  | {
      kind: 'ready'
      key: string
      command: Command
      args: string[]
      opts: Record<string, string | boolean | undefined>
    }

/**
 * Everything about a command line that needs no database: an unknown command, `--help`, unknown options
 * and missing or extra arguments are answered here, so the CLI answers them at once (without opening the
 * database, and also while it is unavailable). `ready` carries the parsed arguments for runCommand.
 */
export function prepareCommand(argv: string[], io: CommandIO): Prepared {
  const found = findCommand(argv)
  if (!found) {
    io.err(`${argv.slice(0, 2).join(' ') || 'command'}: unknown command\n\n${helpText()}`)
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  const command = commands[found.key]!
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    io.out(`usage: bun run cli -- ${command.usage}\n\n${command.summary}\n`)
    return { kind: 'answered', exitCode: EXIT_OK }
  }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: found.rest, options: command.options, allowPositionals: true, strict: true })
  } catch (error) {
    io.err(`${(error as Error).message.split('\n')[0]} (usage: ${command.usage})\n`)
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  if (parsed.positionals.length !== command.positionals.length) {
    const missing = command.positionals.slice(parsed.positionals.length)
    io.err(
      missing.length
        ? `${missing.join(' ')}: missing (usage: ${command.usage})\n`
        : `unexpected argument "${parsed.positionals[command.positionals.length]}" (usage: ${command.usage})\n`,
    )
    return { kind: 'answered', exitCode: EXIT_USAGE }
  }
  return {
    kind: 'ready',
    key: found.key,
    command,
    args: parsed.positionals,
    opts: parsed.values as Record<string, string | boolean | undefined>,
  }
}

export async function runCommand(
  request: CommandRequest,
  services: Services,
  io: CommandIO,
): Promise<number> {
  const prepared = prepareCommand(request.argv, io)
  if (prepared.kind === 'answered') return prepared.exitCode
  try {
    return await prepared.command.run({
      args: prepared.args,
      opts: prepared.opts,
      services,
      io,
      files: request.files ?? {},
    })
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n`)
      return EXIT_USAGE
    }
    io.err(`${prepared.key}: failed: ${(error as Error).message}\n`)
    return EXIT_FAILURE
  }
}
