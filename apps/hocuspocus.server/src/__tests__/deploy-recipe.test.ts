/**
 * deploy/compose.yaml cannot be run here (no Docker, no image registry), so it is held to the recipe that
 * is run: the nginx files reliability/balancer-restart.test.ts runs, mounted where collab.conf expects
 * them; one instance per upstream port of collab.conf, each with the settings, command, stop signal and
 * restart rule of deploy/systemd/collab@.service; the shared settings from the same collab.env, whose
 * addresses are the PostgreSQL and Redis of the compose file. A change to one side that the other lacks
 * fails here.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_DIR } from '@collab/test-support/process'

const read = (path: string) => readFileSync(join(REPO_DIR, 'deploy', path), 'utf8')

type Service = {
  image?: string
  network_mode?: string
  volumes?: string[]
  env_file?: string
  environment?: Record<string, string>
  command?: string[]
  stop_signal?: string
  stop_grace_period?: string
  restart?: string
  ports?: string[]
}
const compose = Bun.YAML.parse(read('compose.yaml')) as { services: Record<string, Service> }
const services = compose.services
const collabConf = read('nginx/collab.conf')
const unit = read('systemd/collab@.service')
const unitValue = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1]
const unitEnvironment = Object.fromEntries(
  [...unit.matchAll(/^Environment=(\w+)=(.*)$/gm)].map(([, k, v]) => [k!, v!]),
)
const sharedEnv: Record<string, string> = Object.fromEntries(
  read('collab.env.example')
    .split('\n')
    .filter((line) => /^\w+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
)
const instances = Object.entries(services).filter(([name]) => name.startsWith('collab-'))

describe('deploy/compose.yaml is the tested recipe', () => {
  test('nginx runs collab.conf and collab-proxy.conf unchanged, where collab.conf includes the proxying', () => {
    const include = /include (\S+collab-proxy\.conf);/.exec(collabConf)?.[1]
    expect(services.nginx?.volumes).toContain('./nginx/collab.conf:/etc/nginx/conf.d/collab.conf:ro')
    expect(services.nginx?.volumes).toContain(`./nginx/collab-proxy.conf:${include}:ro`)
    expect(services.nginx?.ports?.sort()).toEqual(['443:443', '80:80'])
  })

  test("one instance per upstream of collab.conf, each with collab@.service's settings", () => {
    const upstreams = [...collabConf.matchAll(/^\s*server 127\.0\.0\.1:(\d+)/gm)].map((m) => m[1]!)
    expect(upstreams.length).toBeGreaterThan(1)
    expect(instances.map(([, s]) => s.environment?.PORT).sort()).toEqual(upstreams.sort())
    const command = unitValue('ExecStart')!.split(/\s+/)
    for (const [name, service] of instances) {
      const { PORT, ...environment } = service.environment ?? {}
      expect({ name, environment }).toEqual({ name, environment: omitPort(unitEnvironment) })
      expect({ name, command: service.command }).toEqual({ name, command: ['bun', ...command.slice(1)] })
      expect(service.stop_signal).toBe(unitValue('KillSignal'))
      expect(service.stop_grace_period).toBe(`${unitValue('TimeoutStopSec')}s`)
      expect(service.restart).toBe(unitValue('Restart'))
      expect(service.env_file).toBe('collab.env')
      // The unit's instances are on the one machine with nginx: here, nginx's network namespace.
      expect(service.network_mode).toBe('service:nginx')
    }
  })

  test("the shared settings name the compose file's PostgreSQL and Redis, on the machine's loopback", () => {
    expect(Object.keys(sharedEnv)).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'PUBLIC_URL']),
    )
    const database = new URL(sharedEnv.DATABASE_URL!)
    expect(database.hostname).toBe('127.0.0.1')
    expect(database.port).toBe('5432') // the postgres image's
    expect(decodeURIComponent(database.username)).toBe(sharedEnv.POSTGRES_USER ?? 'POSTGRES_USER missing')
    expect(decodeURIComponent(database.password)).toBe(
      sharedEnv.POSTGRES_PASSWORD ?? 'POSTGRES_PASSWORD missing',
    )
    expect(database.pathname.slice(1)).toBe(sharedEnv.POSTGRES_DB ?? 'POSTGRES_DB missing')
    const redis = new URL(sharedEnv.REDIS_URL!)
    expect(redis.hostname).toBe('127.0.0.1')
    expect(services.redis?.command).toEqual(['redis-server', '--bind', '127.0.0.1', '--port', redis.port])
    for (const part of ['postgres', 'redis', 'migrate'])
      expect(services[part]?.network_mode).toBe('service:nginx')
    // Migrations once, from the CLI, as the recipe runs `bun run db:migrate` before the instances.
    expect(services.migrate?.command).toEqual([
      'bun',
      'apps/hocuspocus.server/src/cli/main.ts',
      'db',
      'migrate',
    ])
    expect(unitEnvironment.MIGRATE_ON_START).toBe('false')
  })
})

describe("docs/deploy.md's systemd steps install deploy/systemd/collab@.service as it runs", () => {
  const docs = readFileSync(join(REPO_DIR, 'docs/deploy.md'), 'utf8')
  const section = docs.slice(docs.indexOf('## With systemd'), docs.indexOf('## Restarts'))
  const steps = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  const commands = steps
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'))
    .join('\n')

  test('the unit the steps copy is the one in deploy/systemd, and they enable one instance per upstream', () => {
    expect(commands).toContain('cp deploy/systemd/collab@.service /etc/systemd/system/')
    const enabled = [
      .../systemctl enable --now ((?:collab@\d+ ?)+)/.exec(commands)![1]!.matchAll(/collab@(\d+)/g),
    ]
    const upstreams = [...collabConf.matchAll(/^\s*server 127\.0\.0\.1:(\d+)/gm)].map((m) => m[1]!)
    expect(enabled.map((m) => m[1]!).sort()).toEqual(upstreams.sort())
  })

  test("the steps make the unit's user, folder, bun and settings file", () => {
    const user = unitValue('User')!
    expect(unitValue('Group')).toBe(user)
    expect(commands).toMatch(
      new RegExp(`useradd [^\n]*--home-dir ${unitValue('WorkingDirectory')} [^\n]*${user}$`, 'm'),
    )
    expect(commands).toContain(
      `/opt/collab && bun install && chown -R ${user}:${user} ${unitValue('WorkingDirectory')}`,
    )
    // Debian's npm installs global commands in /usr/local/bin: where the unit runs bun from.
    expect(unitValue('ExecStart')!.split(/\s+/)[0]).toBe('/usr/local/bin/bun')
    expect(commands).toMatch(/npm install -g bun@\d/)
    expect(commands).toMatch(
      new RegExp(
        `install -m 0640 -g ${user} deploy/collab.env.example ${unitValue('EnvironmentFile')}$`,
        'm',
      ),
    )
  })
})

function omitPort(environment: Record<string, string>): Record<string, string> {
  const { PORT, ...rest } = environment
  return rest
}
