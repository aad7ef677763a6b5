// What both page benchmarks (page.mjs, page-profile.mjs) do to the explorer page.

/** Sets the number of tokens as the page's own control does, and waits until the page took it. */
export async function setTokenCount(page, count) {
  await page.evaluate((n) => {
    const input = document.getElementById('tokens-n');
    input.value = String(n);
    input.dispatchEvent(new Event('change', { bubbles: true }));
  }, count);
  await page.waitForFunction((n) => document.getElementById('tokens-n').value === String(n), count, { timeout: 120000 });
}

/** The value after `name` among the command line's arguments, else `fallback` (the page benchmarks' options). */
export function optionValue(name, fallback, argv = process.argv.slice(2)) {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
}
