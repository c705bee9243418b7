/**
 * The web editor in a real browser: Debian's Chromium (`apt-get install -y chromium`; .ci/run installs
 * it) driven by puppeteer-core, against the production server on a real port. A person signs in, opens a
 * document and types; an agent edits the same paragraph over MCP meanwhile; the page shows the agent's
 * edit and keeps the person's typing; a second person in another browser context sees both.
 *
 * `WEB_SCREENSHOT=docs/web-editor.png bun test web-editor` also saves the page as the README's picture.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { createTestDatabase, DATABASE_KIND } from '@collab/test-support/database'
import { createDocument } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { outlineId } from '@collab/test-support/outline'
import { spawnServer } from '@collab/test-support/process'
import { eventually, userWithToken } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { MAX_API_CHAT_MESSAGES } from '../http/api.ts'
import type { RunningServer } from '../server.ts'
import { caretAtEnd, editorText, useServerAndBrowser } from './web-support.ts'

const PASSWORD = 'correct horse battery staple'

/** A heading's section id, as an agent gets it from get_outline. */
async function sectionIdOf(
  server: RunningServer,
  token: string,
  slug: string,
  heading: string,
): Promise<string> {
  const agent = await connectClient(mcpUrlOf(server), token)
  try {
    return (await sectionOf(agent, slug, heading)).sectionId
  } finally {
    await agent.close()
  }
}
/**
 * The whole section id of a heading and its rev, from a read of it with the start of its id that
 * get_outline prints.
 */
async function sectionOf(agent: Client, slug: string, heading: string) {
  const { text: outline } = await callText(agent, 'get_outline', { slug })
  const { text: read } = await callText(agent, 'read_document', {
    slug,
    section_id: outlineId(outline, heading),
  })
  return { sectionId: /^section_id: ([\w-]+)$/m.exec(read)![1]!, rev: /^rev: ([0-9a-f]+)$/m.exec(read)![1]! }
}

describe.skipIf(!CHROMIUM)(`the web editor in Chromium (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let browser: Browser
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })

  async function person(handle: string) {
    const made = await userWithToken(server, handle)
    expect((await server.auth.accounts.setPassword(made.user.id, PASSWORD)).kind).toBe('ok')
    return made
  }

  /** A fresh browser context (its own cookies) signed in as `handle`, on the documents page. */
  async function signedIn(handle: string): Promise<Page> {
    const context = await browser.createBrowserContext()
    const page = await context.newPage()
    await page.setViewport({ width: 1280, height: 800 })
    await page.goto(`${server.url}/`)
    // Not signed in: the page sends the person to sign in, and back here after.
    expect(new URL(page.url()).pathname).toBe('/sign-in')
    await page.type('#handle', handle)
    await page.type('#password', PASSWORD)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    expect(new URL(page.url()).pathname).toBe('/')
    return page
  }

  test('a person types while an agent edits the same paragraph: both land, and a second person sees both', async () => {
    const alice = await person('alice')
    const bob = await person('bob')
    const { slug } = await createDocument(server, alice.user.id, {
      title: 'Launch plan',
      markdown: '## Goals\n\nShip the editor.\n\n## Risks\n\nNone known.\n',
    })
    expect((await server.services.documents.share(slug, bob.user.id, 'editor')).kind).toBe('ok')

    const page = await signedIn('alice')
    // The list shows the document; opening it shows its text once synced.
    await page.waitForSelector(`a[href="/d/${slug}"]`)
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/d/${slug}"]`)])
    await page.waitForFunction(() =>
      document.querySelector('.ProseMirror')?.textContent?.includes('Ship the editor.'),
    )
    // The outline beside it lists the headings.
    await eventually(
      async () => {
        const outline = await page.$$eval('.outline a', (links) => links.map((a) => a.textContent))
        expect(outline).toEqual(['Launch plan', 'Goals', 'Risks'])
      },
      10_000,
      'the outline',
    )

    // The person puts the cursor at the end of "Ship the editor." and types.
    await caretAtEnd(page, '.ProseMirror p', { text: 'Ship the editor.' })
    await page.keyboard.type(' Typed by Alice')

    // The chat beside it is the Goals heading's (the cursor is in that section): Alice posts there.
    await eventually(
      async () => expect(await page.$eval('.chat h2', (e) => e.textContent)).toBe('Chat: Goals'),
      10_000,
      'the chat of Goals',
    )
    await page.type('.chat textarea', 'Agent, can you tighten this @section?')
    await page.click('.chat button[type=submit]')
    await eventually(
      async () =>
        expect(await page.$$eval('.messages p', (ps) => ps.map((p) => p.textContent))).toEqual([
          'Agent, can you tighten this section?',
        ]),
      10_000,
      'the posted message',
    )
    await caretAtEnd(page, '.ProseMirror p', { startsWith: 'Ship the editor.' })

    // Meanwhile an agent, as Alice over MCP, rewrites the start of the same paragraph.
    const agent = await connectClient(mcpUrlOf(server), alice.token)
    try {
      const goals = await sectionOf(agent, slug, 'Goals')
      const { text: answer, isError } = await callText(agent, 'replace_text', {
        slug,
        section_id: goals.sectionId,
        rev: goals.rev,
        old_text: 'Ship',
        new_text: 'Release',
      })
      expect({ answer, isError }).toMatchObject({ isError: false })
      expect(answer).toContain(`section_id: ${goals.sectionId}`)
    } finally {
      await agent.close()
    }
    // The agent is shown among those present, as an agent, with its caret where its edit ended.
    await eventually(
      async () => {
        const names = await page.$$eval('.presence li[data-agent]', (items) =>
          items.map((li) => li.textContent),
        )
        expect(names).toEqual(["✦ alice's agent"])
        expect(await page.$$eval('.ProseMirror .caret.agent', (carets) => carets.length)).toBe(1)
      },
      4_000,
      'the agent among those present',
    )
    if (process.env.WEB_SCREENSHOT) {
      // From the top: typing scrolled the caret into view, and the sticky header then covered the bar.
      await page.evaluate(() => window.scrollTo(0, 0))
      await page.screenshot({
        path: resolve(import.meta.dir, '../../../..', process.env.WEB_SCREENSHOT) as `${string}.png`,
      })
    }
    await page.keyboard.type(' and more.')

    const expected = 'Release the editor. Typed by Alice and more.'
    await eventually(
      async () => expect(await editorText(page)).toContain(expected),
      15_000,
      'the merged paragraph in the page',
    )

    // Bob, in another browser context, opens the same document and sees both edits.
    const second = await signedIn('bob')
    await second.goto(`${server.url}/d/${slug}`)
    await eventually(
      async () => expect(await editorText(second)).toContain(expected),
      15_000,
      "the merged paragraph in Bob's page",
    )
    // Each sees the other present.
    await eventually(
      async () => {
        const names = await page.$$eval('.presence li', (items) => items.map((li) => li.textContent))
        expect(names.some((name) => name?.includes('bob'))).toBe(true)
      },
      15_000,
      'Bob in the presence list',
    )

    // And the stored document has both (what an agent reads next).
    const reader = await connectClient(mcpUrlOf(server), alice.token)
    try {
      await eventually(
        async () => expect((await callText(reader, 'read_document', { slug })).text).toContain(expected),
        15_000,
        'the stored paragraph',
      )
    } finally {
      await reader.close()
    }

    // A viewer gets the same document in a read-only editor, and no chat box.
    const carl = await person('carl')
    expect((await server.services.documents.share(slug, carl.user.id, 'viewer')).kind).toBe('ok')
    const third = await signedIn('carl')
    await third.goto(`${server.url}/d/${slug}`)
    await eventually(
      async () => expect(await editorText(third)).toContain(expected),
      15_000,
      "the paragraph in Carl's page",
    )
    expect(await third.$eval('.ProseMirror', (element) => element.getAttribute('contenteditable'))).toBe(
      'false',
    )
    expect(await third.$('.chat textarea')).toBeNull()
    expect(await third.$eval('.toolbar', (bar) => (bar as HTMLElement).hidden)).toBe(true)
    await third.browserContext().close()

    await page.browserContext().close()
    await second.browserContext().close()
  }, 120_000)

  test('the documents page finds, imports a Markdown file and creates; the owner shares and publishes from the dialog', async () => {
    const owner = await person('edna')
    await person('fred')
    for (const title of ['Quarterly report', 'Holiday rota']) {
      const made = await server.services.documents.create(owner.user.id, {
        title,
        markdown: `About ${title}.`,
      })
      if (made.kind === 'error') throw new Error(made.message)
    }
    const page = await signedIn('edna')
    const titles = () => page.$$eval('tbody a', (links) => links.map((a) => a.textContent))
    await eventually(
      async () => expect((await titles()).sort()).toEqual(['Holiday rota', 'Quarterly report']),
      10_000,
      'the list',
    )
    await page.type('input[type=search]', 'rota')
    await eventually(
      async () => expect(await titles()).toEqual(['Holiday rota']),
      10_000,
      'the search result',
    )

    // Create: a title, and the new document opens with it as its first heading.
    await page.type('input[name=title]', 'Fresh page')
    await Promise.all([page.waitForNavigation(), page.click('form.inline button[type=submit]')])
    await page.waitForFunction(() => document.querySelector('.ProseMirror h1')?.textContent === 'Fresh page')
    await page.goto(`${server.url}/`)

    // Import: a file from disk through the page's file input, opened once stored.
    const file = join(mkdtempSync(join(tmpdir(), 'web-import-')), 'minutes.md')
    writeFileSync(file, '# Team minutes\n\n## Decisions\n\n- [x] Ship the editor\n- [ ] Write the docs\n')
    const input = await page.$('input[type=file]')
    await input!.uploadFile(file)
    await Promise.all([
      page.waitForNavigation(),
      page.click('form.inline:nth-of-type(2) button[type=submit]'),
    ])
    expect(new URL(page.url()).pathname).toStartWith('/d/')
    await page.waitForFunction(() =>
      document.querySelector('.ProseMirror')?.textContent?.includes('Write the docs'),
    )
    expect(await page.$$eval('.ProseMirror ul[data-type=taskList] li', (items) => items.length)).toBe(2)
    const slug = decodeURIComponent(new URL(page.url()).pathname.slice(3))

    // Share with Fred as a viewer and make it public, from the dialog.
    // The header's Share button, by its text: Rename, Duplicate and Delete sit beside it.
    await page.$$eval('button', (buttons) => buttons.find((b) => b.textContent === 'Share')?.click())
    await page.waitForSelector('dialog.share[open]')
    await page.type('dialog.share input[name=handle]', 'fred')
    await page.select('dialog.share select[name=role]', 'viewer')
    await page.click('dialog.share form.inline button[type=submit]')
    await eventually(
      async () =>
        expect(
          await page.$$eval('dialog.share .members li', (items) => items.map((li) => li.textContent)),
        ).toEqual(['fred (viewer) Remove']),
      10_000,
      'the member listed',
    )
    await page.click('dialog.share label.check input[type=checkbox]')
    await eventually(
      async () => {
        const document = await server.services.documents.bySlugForAdmin(slug)
        expect(document.kind === 'ok' && document.value.isPrivate).toBe(false)
      },
      10_000,
      'the document public',
    )
    const members = await server.services.db.prisma.documentMember.findMany({
      where: { user: { handle: 'fred' } },
    })
    expect(members.map((m) => m.role)).toEqual(['viewer'])
    await page.browserContext().close()
  }, 120_000)

  test("the formatting bar bolds a selection (an agent reads it as **bold**); a heading's chat pages back; signing out elsewhere stops editing", async () => {
    const owner = await person('gale')
    const created = await server.services.documents.create(owner.user.id, {
      title: 'Formats',
      markdown: '## Notes\n\nmake this strong please\n',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { slug, id } = created.value
    const notes = await sectionIdOf(server, owner.token, slug, 'Notes')
    // A long history: more than one page (MAX_API_CHAT_MESSAGES) of messages in the Notes room.
    for (let i = 1; i <= MAX_API_CHAT_MESSAGES + 5; i++)
      await server.services.chat.post(id, notes, owner.user.id, `message ${i}`)

    const page = await signedIn('gale')
    await page.goto(`${server.url}/d/${slug}`)
    await page.waitForFunction(() =>
      document.querySelector('.ProseMirror')?.textContent?.includes('make this strong'),
    )
    // Select "strong" and press B in the bar.
    await page.evaluate(() => {
      ;(document.querySelector('.ProseMirror') as HTMLElement).focus()
      const paragraph = Array.from(document.querySelectorAll('.ProseMirror p')).find((p) =>
        p.textContent?.startsWith('make this'),
      )!
      const text = paragraph.firstChild!
      const range = document.createRange()
      range.setStart(text, 'make this '.length)
      range.setEnd(text, 'make this strong'.length)
      getSelection()!.removeAllRanges()
      getSelection()!.addRange(range)
    })
    await page.click('.toolbar button[aria-label^="Bold"]')
    await eventually(
      async () => expect(await page.$eval('.ProseMirror strong', (e) => e.textContent)).toBe('strong'),
      10_000,
      'the bold text',
    )
    expect(
      await page.$eval('.toolbar button[aria-label^="Bold"]', (b) => b.getAttribute('aria-pressed')),
    ).toBe('true')
    const agent = await connectClient(mcpUrlOf(server), owner.token)
    try {
      await eventually(
        async () =>
          expect((await callText(agent, 'read_document', { slug })).text).toContain(
            'make this **strong** please',
          ),
        10_000,
        'the agent reading the bold word',
      )
    } finally {
      await agent.close()
    }

    // The chat shows the latest page; "Show older messages" brings the rest, oldest first.
    const shown = () => page.$$eval('.messages p', (ps) => ps.map((p) => p.textContent))
    await eventually(
      async () => expect((await shown()).length).toBe(MAX_API_CHAT_MESSAGES),
      10_000,
      'the latest page',
    )
    expect((await shown()).at(-1)).toBe(`message ${MAX_API_CHAT_MESSAGES + 5}`)
    await page.click('.messages button')
    await eventually(
      async () => expect((await shown()).length).toBe(MAX_API_CHAT_MESSAGES + 5),
      10_000,
      'the older page',
    )
    expect((await shown())[0]).toBe('message 1')
    expect(await page.$('.messages button')).toBeNull()

    // Signing out in another tab ends this page's editing at once, and says so in a person's words.
    const other = await page.browserContext().newPage()
    await other.goto(`${server.url}/apps`)
    await Promise.all([other.waitForNavigation(), other.click('form[action="/sign-out"] button')])
    await eventually(
      async () => expect(await page.$eval('.banner', (b) => b.textContent)).toContain('You were signed out'),
      10_000,
      'the signed-out banner',
    )
    expect(await page.$eval('.ProseMirror', (e) => e.getAttribute('contenteditable'))).toBe('false')
    await page.browserContext().close()
  }, 120_000)

  test("a person's caret stays in their paragraph while an agent restructures the section above it", async () => {
    const owner = await person('dora')
    const { slug } = await createDocument(server, owner.user.id, {
      title: 'Structure',
      markdown: '## Intro\n\nFirst.\n\nSecond.\n\n## Body\n\nTyping here.\n',
    })
    const page = await signedIn('dora')
    await page.goto(`${server.url}/d/${slug}`)
    await page.waitForFunction(() =>
      document.querySelector('.ProseMirror')?.textContent?.includes('Typing here.'),
    )
    await caretAtEnd(page, '.ProseMirror p', { text: 'Typing here.' })
    await page.keyboard.type(' One')
    const agent = await connectClient(mcpUrlOf(server), owner.token)
    try {
      // Blocks above the caret removed and added: every node before it changes size and place.
      const intro = await sectionOf(agent, slug, 'Intro')
      const edited = await callText(agent, 'edit_blocks', {
        slug,
        section_id: intro.sectionId,
        rev: intro.rev,
        remove_blocks: [1, 2],
        markdown:
          'A new first paragraph.\n\n- a list\n- of two\n\nAnd a longer closing paragraph than before.',
      })
      expect(edited.isError).toBe(false)
    } finally {
      await agent.close()
    }
    await eventually(
      async () => expect(await editorText(page)).toContain('And a longer closing'),
      10_000,
      'the agent edit',
    )
    await page.keyboard.type(' Two')
    await eventually(
      async () =>
        expect(await page.$$eval('.ProseMirror p', (ps) => ps.map((p) => p.textContent))).toEqual([
          'A new first paragraph.',
          'a list',
          'of two',
          'And a longer closing paragraph than before.',
          'Typing here. One Two',
        ]),
      10_000,
      'the typing in its own paragraph',
    )
    await page.browserContext().close()
  }, 120_000)

  test('bun run start on an empty database: the printed link lets the person choose a password, sign in and edit', async () => {
    const db = await createTestDatabase()
    const started = await spawnServer({ DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' })
    const context = await browser.createBrowserContext()
    try {
      const link = await eventually(
        () => {
          const match = /(http:\/\/\S+\/invite\/\S+)/.exec(started.stderr())
          if (!match) throw new Error('no invite link printed yet')
          return match[1]!
        },
        15_000,
        'the first-run invite link',
      )
      const page = await context.newPage()
      await page.goto(link)
      await page.type('#password', PASSWORD)
      await page.type('#confirm', PASSWORD)
      // Setting the password signs the person in: they land on their documents, not on a sign-in form.
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
      expect(new URL(page.url()).pathname).toBe('/')
      await page.waitForSelector('a[href^="/d/"]')
      await Promise.all([page.waitForNavigation(), page.click('a[href^="/d/"]')])
      await page.waitForFunction(() =>
        document.querySelector('.ProseMirror')?.textContent?.includes('Next steps'),
      )
      // It tells a person what the page does: sharing and importing here, no command lines (issue 28).
      const welcome = await editorText(page)
      expect(welcome).toContain('Share button')
      expect(welcome).not.toContain('bun run cli')
      // The caret at the end of the title (a click at its middle could land in the paragraph below
      // while the page was still laying out: the typing went there once).
      await caretAtEnd(page, '.ProseMirror h1', { text: 'Welcome' })
      await page.keyboard.type(' to our team')
      await eventually(
        async () => expect(await editorText(page)).toContain('Welcome to our team'),
        10_000,
        'the typed title',
      )
    } finally {
      await context.close()
      started.proc.kill('SIGTERM')
      await started.proc.exited
      await db.cleanup()
    }
  }, 120_000)
})
