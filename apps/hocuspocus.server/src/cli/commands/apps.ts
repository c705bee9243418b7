/** CLI commands for the apps (OAuth clients) a user connected: list them, disconnect one. */
import { accountsOf, type Command, EXIT_OK, table, unwrap, when } from './command.ts'

export const appCommands: Record<string, Command> = {
  'app list': {
    usage: 'app list HANDLE',
    summary: 'List the apps (OAuth clients) a user connected, with what they may do.',
    options: {},
    positionals: ['HANDLE'],
    async run({ args, services, io }) {
      const user = unwrap(await services.users.byHandle(args[0]!))
      const apps = await (await accountsOf(services)).apps(user.id)
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
      const revoked = unwrap(await (await accountsOf(services)).revokeApp(user.id, args[1]!))
      io.out(`revoked ${args[1]} for ${user.handle} (${revoked.tokens} tokens)\n`)
      return EXIT_OK
    },
  },
}
