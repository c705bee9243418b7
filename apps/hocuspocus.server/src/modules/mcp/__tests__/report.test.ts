/**
 * A call's report on its own (tools/report.ts), with the request's notification channel recorded: while a
 * stage lasts the caller hears "still <stage>" with progress that keeps increasing, and nothing once the
 * call has its answer; without a progress token there is no progress at all; log messages follow the
 * level. Failures caught: a heartbeat that repeats a progress value (the spec requires it to increase), one
 * that outlives the call (a timer left running per call), progress sent to a caller who did not ask.
 */
import { describe, expect, test } from 'bun:test'
import { eventually } from '@collab/test-support/server'
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js'
import { type CallExtra, callReport, createLogLevel } from '../tools/report.ts'

/**
 * The heartbeat's period here: the timer is the same whatever its period, and at PROGRESS_INTERVAL_MS
 * (1 s) the waits below (three beats, then periods of silence) cost every run ~5 s of waiting.
 */
const INTERVAL_MS = 50

function recordingExtra(progressToken?: string) {
  const sent: ServerNotification[] = []
  const extra = {
    _meta: progressToken === undefined ? undefined : { progressToken },
    sendNotification: async (notification: ServerNotification) => {
      sent.push(notification)
    },
  } as unknown as CallExtra
  const progress = () =>
    sent.flatMap((n) =>
      n.method === 'notifications/progress'
        ? [{ progress: n.params.progress, message: n.params.message }]
        : [],
    )
  return { extra, sent, progress }
}

describe('a call’s report', () => {
  test('a long stage sends "still …" heartbeats with increasing progress, and none after the answer', async () => {
    const { extra, progress } = recordingExtra('t-1')
    const report = callReport('read_document', extra, createLogLevel(), INTERVAL_MS)
    report.stage('opening the document')
    await eventually(() => expect(progress().length).toBeGreaterThanOrEqual(3), 40 * INTERVAL_MS)
    report.end()
    const heard = progress()
    expect(heard[0]).toEqual({ progress: 1, message: 'opening the document' })
    expect(heard.slice(1).every((p) => p.message === 'still opening the document')).toBe(true)
    expect(heard.map((p) => p.progress)).toEqual(heard.map((_, i) => i + 1))
    // That no heartbeat follows the answer can only be watched for: four periods, when one would be due.
    await Bun.sleep(4 * INTERVAL_MS)
    expect(progress().length).toBe(heard.length)
    report.stage('after the answer')
    expect(progress().length).toBe(heard.length)
  }, 30_000)

  test('a call that names no stage is heard too ("still working"), until its answer', async () => {
    const { extra, progress } = recordingExtra('t-2')
    const report = callReport('edit_blocks', extra, createLogLevel(), INTERVAL_MS)
    await eventually(() => expect(progress().length).toBeGreaterThanOrEqual(1), 40 * INTERVAL_MS)
    report.end()
    expect(progress()[0]).toEqual({ progress: 1, message: 'still working' })
  }, 30_000)

  test('without a progress token: no progress; log messages from the level the caller set', () => {
    const { extra, sent, progress } = recordingExtra()
    const level = createLogLevel()
    const report = callReport('find_sections', extra, level)
    report.stage('searching its sections') // info: below the default notice
    report.log('error', 'The call failed on the server.')
    level.set('info')
    report.stage('searching again')
    report.end()
    expect(progress()).toEqual([])
    expect(sent.map((n) => n.params)).toEqual([
      { level: 'error', logger: 'collab-documents', data: 'find_sections: The call failed on the server.' },
      { level: 'info', logger: 'collab-documents', data: 'find_sections: searching again' },
    ])
  })
})
