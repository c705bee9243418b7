import type { DocNode } from '../doc-json.ts'

// URL characters only: no whitespace, brackets, emphasis or escape characters, so a URL line can never
// swallow Markdown around it and a `[video: url]` placeholder always reads back as the same embed.
const URL_BODY = `[^\\s<>()\\[\\]{}*\\\\\`"'|^]`
const YOUTUBE = new RegExp(
  `^https?://(?:www\\.|m\\.)?(?:youtube\\.com/(?:watch\\?|embed/|shorts/|live/)|youtu\\.be/)${URL_BODY}+$`,
  'i',
)
const VIDEO_FILE = new RegExp(`^https?://${URL_BODY}+\\.(?:mp4|webm|ogv|mov|m4v)(?:[?#]${URL_BODY}*)?$`, 'i')
const AUDIO_FILE = new RegExp(
  `^https?://${URL_BODY}+\\.(?:mp3|ogg|oga|wav|m4a|flac|aac|opus)(?:[?#]${URL_BODY}*)?$`,
  'i',
)
const HTTP_URL = new RegExp(`^https?://${URL_BODY}+$`, 'i')
// The placeholder the Markdown view writes for media, so an agent can write back what it read.
const PLACEHOLDER = new RegExp(`^\\[(video|audio): (https?://${URL_BODY}+)\\]$`, 'i')

/** The embed node for a paragraph whose whole text is a media URL or a media placeholder, else null. */
export function mediaNodeForLine(line: string): DocNode | null {
  const text = line.trim()
  const placeholder = PLACEHOLDER.exec(text)
  if (placeholder) {
    const kind = placeholder[1]!.toLowerCase()
    const src = placeholder[2]!
    if (YOUTUBE.test(src)) return { type: 'youtube', attrs: { src } }
    return { type: 'mediaEmbed', attrs: { src, kind } }
  }
  if (!HTTP_URL.test(text)) return null
  if (YOUTUBE.test(text)) return { type: 'youtube', attrs: { src: text } }
  if (VIDEO_FILE.test(text)) return { type: 'mediaEmbed', attrs: { src: text, kind: 'video' } }
  if (AUDIO_FILE.test(text)) return { type: 'mediaEmbed', attrs: { src: text, kind: 'audio' } }
  return null
}
