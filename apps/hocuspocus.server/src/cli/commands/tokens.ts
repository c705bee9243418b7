/** CLI commands for API tokens: issue (the secret printed once), list, revoke. */
import { scopesOf } from '../../auth/scopes.ts'
import { type Command, EXIT_OK, table, UsageError, unwrap, when } from './command.ts'

/** `token issue`'s --scope and --expires-days, read (a UsageError names what is wrong). */
function issueOptions(opts: Record<string, string | boolean | undefined>) {
  const read = scopesOf((opts.scope as string | undefined) ?? 'read,write')
  if ('wrong' in read) throw new UsageError(read.wrong)
  const daysRaw = opts['expires-days'] as string | undefined
  if (daysRaw !== undefined && !/^\d+$/.test(daysRaw)) {
    throw new UsageError(`--expires-days: "${daysRaw}" is not a whole number of days`)
  }
  return { scopes: read.scopes, daysRaw }
}

export const tokenCommands: Record<string, Command> = {
  'token issue': {
    usage:
      'token issue HANDLE [--scope read|write|read,write|suggest|read,suggest] [--label TEXT] [--expires-days N]',
    summary: 'Issue an API token; prints it once on stdout (and nothing else).',
    options: { scope: { type: 'string' }, label: { type: 'string' }, 'expires-days': { type: 'string' } },
    positionals: ['HANDLE'],
    check: (opts) => {
      issueOptions(opts)
    },
    async run({ args, opts, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const { scopes, daysRaw } = issueOptions(opts)
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
}
