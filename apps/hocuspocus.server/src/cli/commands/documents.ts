/** CLI commands for documents: import and export Markdown, list, share and unshare, flags, delete. */
import { basename, extname } from 'node:path'
import { eachPiece } from '../../documents/export-markdown.ts'
import type { Services } from '../../services.ts'
import { type Command, EXIT_OK, table, UsageError, unwrap, when } from './command.ts'

/** --owner's user; without it the only user there is (a fresh install has one, see first-run.ts). */
async function ownerFor(services: Services, handle: string | undefined) {
  if (handle) return unwrap(await services.users.byHandle(handle))
  const users = await services.users.list()
  if (users.length === 1) return users[0]!
  throw new UsageError(
    `--owner: required when there is more than one user (the HANDLE of the user who will own the document; \`user list\` shows them)`,
  )
}

export const documentCommands: Record<string, Command> = {
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
      // Piece by piece as they are rendered (each decodes alone: pieces end where a block's Markdown does).
      const decoder = new TextDecoder()
      const body = unwrap(await services.documents.markdownForAdmin(args[0]!))
      await eachPiece(body, (piece) => io.out(decoder.decode(piece)))
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
    usage: 'doc set SLUG [--public|--private] [--read-only|--writable] [--agents-suggest|--agents-write]',
    summary: 'Change a document’s visibility, read-only flag, or whether agents’ edits land as suggestions.',
    options: {
      public: { type: 'boolean' },
      private: { type: 'boolean' },
      'read-only': { type: 'boolean' },
      writable: { type: 'boolean' },
      'agents-suggest': { type: 'boolean' },
      'agents-write': { type: 'boolean' },
    },
    positionals: ['SLUG'],
    async run({ args, opts, services, io }) {
      if (opts.public && opts.private) throw new UsageError('--public and --private: pick one')
      if (opts['read-only'] && opts.writable) throw new UsageError('--read-only and --writable: pick one')
      if (opts['agents-suggest'] && opts['agents-write'])
        throw new UsageError('--agents-suggest and --agents-write: pick one')
      const flags = {
        ...(opts['agents-suggest'] || opts['agents-write']
          ? { agentsSuggest: Boolean(opts['agents-suggest']) }
          : {}),
        ...(opts.public || opts.private ? { isPrivate: Boolean(opts.private) } : {}),
        ...(opts['read-only'] || opts.writable ? { readOnly: Boolean(opts['read-only']) } : {}),
      }
      if (Object.keys(flags).length === 0)
        throw new UsageError(
          'doc set: give at least one of --public, --private, --read-only, --writable, --agents-suggest, --agents-write',
        )
      const doc = unwrap(await services.documents.setFlags(args[0]!, flags))
      io.out(
        `${doc.slug}: ${doc.isPrivate ? 'private' : 'public'}${doc.readOnly ? ', read-only' : ''}${doc.agentsSuggest ? ', agents suggest' : ''}\n`,
      )
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
}
