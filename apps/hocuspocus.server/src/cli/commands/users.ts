/** CLI commands for users: create, list, set a sign-in password, invite. */
import { loadConfig } from '../../config.ts'
import { INVITE_TTL_MS } from '../../limits.ts'
import { accountsOf, type Command, EXIT_OK, table, UsageError, unwrap, when } from './command.ts'

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

export const userCommands: Record<string, Command> = {
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
      const signIn = await (await accountsOf(services)).withPassword()
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
      unwrap(await (await accountsOf(services)).setPassword(user.id, password))
      io.out(`${user.handle}: password set; sign in at ${publicBase()}/sign-in\n`)
      return EXIT_OK
    },
  },
  'user invite': {
    usage: 'user invite HANDLE [--document SLUG]',
    summary: `Print a link that lets the user choose their own password (works once, for ${INVITE_TTL_MS / 86_400_000} days) and signs them in; with --document, on that document (share it with them too).`,
    options: { document: { type: 'string' } },
    positionals: ['HANDLE'],
    async run({ args, opts, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const slug = typeof opts.document === 'string' ? opts.document : undefined
      // The document must exist now; whether they may read it is its sharing's business (doc share).
      if (slug !== undefined) unwrap(await services.documents.bySlugForAdmin(slug))
      const invite = await (await accountsOf(services)).createInvite(user.id)
      const next = slug === undefined ? '' : `?next=${encodeURIComponent(`/d/${slug}`)}`
      io.out(`${publicBase()}/invite/${invite.token}${next}\n`)
      io.err(
        `Invite for ${user.handle}, valid until ${when(invite.expiresAt)}. Send it privately: it sets their password.\n`,
      )
      return EXIT_OK
    },
  },
}
