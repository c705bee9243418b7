/** The frame section: each kind of framed output's opening line and the one closing line. */
import { FRAME_END, type FrameSource, frameStart } from '../render/frame.ts'
import { code, type Section, slot, table } from './format.ts'

/** Each kind of framed output's opening line (`frameStart`), as the tools that show it open it. */
export function frameSection(): Section {
  const whose = slot('whose')
  const rows: [string, FrameSource][] = [
    ['read_document, resources/read', { kind: 'document', slug: slot('slug'), whose }],
    ['get_outline', { kind: 'outline', slug: slot('slug'), whose }],
    ['find_documents', { kind: 'document list' }],
    ['find_sections with slug', { kind: 'section matches', slug: slot('slug'), whose }],
    ['find_sections without slug', { kind: 'section matches list' }],
    ['list_chat_rooms', { kind: 'chat rooms', slug: slot('slug'), whose }],
    [
      'read_chat_thread',
      {
        kind: 'chat thread',
        slug: slot('slug'),
        whose,
        sectionId: slot('section_id'),
        headingRemoved: false,
      },
    ],
    [
      'read_chat_thread, the heading gone',
      { kind: 'chat thread', slug: slot('slug'), whose, sectionId: slot('section_id'), headingRemoved: true },
    ],
  ]
  const openings = table(
    ['output of', 'opening line'],
    rows.map(([tool, source]) => [tool, code(frameStart(source))]),
  )
  return { name: 'frame', text: `${openings}\n\nThe closing line, once per output: ${code(FRAME_END)}` }
}
