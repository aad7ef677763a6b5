// scripts/build-site.mjs never writes a site with a placeholder left in it (issue 34: a page once
// failed with `__LAYOUT_RULES__ is not defined`): a placeholder of the page's sources that the build
// does not fill in fails the build at once, any left in what it wrote fails it at the end, and the
// site is built beside its folder and moved in only when whole, so a failed build leaves the old
// site as it was and a server never hands out a half-built one. Without Chromium (CHROMIUM points
// nowhere) the build skips the prerendered first screen, which keeps these builds short.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { dist, repo } from './helpers.mjs';

const work = mkdtempSync(join(tmpdir(), 'attention-site-build-'));
after(() => rmSync(work, { recursive: true, force: true }));

function build(args) {
  return spawnSync(process.execPath, [join(repo, 'scripts', 'build-site.mjs'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, CHROMIUM: join(work, 'no-chromium') },
  });
}

const files = (dir) => readdirSync(dir, { recursive: true }).filter((f) => statSync(join(dir, f)).isFile());
const leftovers = () => readdirSync(work).filter((f) => f.includes('.building-'));

test('a whole build: no placeholder left in any file, nothing left beside the site', () => {
  const out = join(work, 'site');
  const r = build(['--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const left = files(out).filter(
    (f) => /\.(html|js|css)$/.test(f) && /__(LAYOUT_RULES|PAGE_START)__/.test(readFileSync(join(out, f), 'utf8')),
  );
  assert.deepEqual(left, []);
  assert.match(readFileSync(join(out, 'first-screen.js'), 'utf8'), /var rules = \{ phone: /);
  assert.deepEqual(leftovers(), []);
});

test("a placeholder in the page's sources that the build does not fill in fails the build at once, naming the file", () => {
  const page = join(work, 'page-extra');
  cpSync(join(repo, 'web', 'page'), page, { recursive: true });
  writeFileSync(join(page, 'why.js'), `${readFileSync(join(page, 'why.js'), 'utf8')}\nexport const later = __WHY_RULES__;\n`);
  const out = join(work, 'site-extra');
  const r = build(['--page', page, '--out', out]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /build-site: web\/page\/why\.js holds the placeholder __WHY_RULES__, which build-site does not fill in there/);
  assert.equal(existsSync(out), false);
  // The build's own placeholder in another file is refused the same way.
  writeFileSync(join(page, 'why.js'), readFileSync(join(repo, 'web', 'page', 'why.js'), 'utf8').replace(/$/, '\n// __LAYOUT_RULES__\n'));
  const again = build(['--page', page, '--out', out]);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /web\/page\/why\.js holds the placeholder __LAYOUT_RULES__/);
  assert.deepEqual(leftovers(), []);
});

test('a placeholder left in what the build wrote fails it at the end, and the site it replaces stays as it was', () => {
  // The package's code reaches the site (lib/) and its bundle: a placeholder there is caught last.
  const lib = join(work, 'lib-with-placeholder');
  cpSync(dist, lib, { recursive: true });
  writeFileSync(join(lib, 'presets.js'), `${readFileSync(join(lib, 'presets.js'), 'utf8')}\nexport const STRAY = '__PAGE_START__';\n`);
  const out = join(work, 'site-kept');
  cpSync(join(work, 'site'), out, { recursive: true });
  writeFileSync(join(out, 'marker.txt'), 'the site before');
  const r = build(['--lib', lib, '--out', out]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /build-site: placeholders left unfilled in what build-site wrote: .*lib\/presets\.js \(__PAGE_START__\)/);
  assert.equal(readFileSync(join(out, 'marker.txt'), 'utf8'), 'the site before');
  assert.deepEqual(leftovers(), []);
});
