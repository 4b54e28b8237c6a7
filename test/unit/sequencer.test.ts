import { describe, expect, it } from 'vitest';
import { spaceBrowserFiles } from '../helpers/sequencer.js';

const isBrowser = (name: string) => name.endsWith('.browser');

describe('the test sequencer keeps Chromium files apart', () => {
  it('moves a browser file after the next files until it is `apart` places from the last one', () => {
    const sorted = [
      'cli',
      'dashboard.browser',
      'payments.browser',
      'reconcile',
      'providers.browser',
      'a',
      'b',
    ];
    expect(spaceBrowserFiles(sorted, isBrowser, 3)).toEqual([
      'cli',
      'dashboard.browser',
      'reconcile',
      'a',
      'payments.browser',
      'b',
      'providers.browser',
    ]);
  });

  it('keeps every file once, and puts the browser files at the end when nothing else is left', () => {
    const sorted = ['one.browser', 'two.browser', 'x', 'three.browser'];
    const spaced = spaceBrowserFiles(sorted, isBrowser, 3);
    expect(spaced).toEqual(['one.browser', 'x', 'two.browser', 'three.browser']);
    expect([...spaced].sort()).toEqual([...sorted].sort());
  });

  it('leaves an order without two nearby browser files alone', () => {
    const sorted = ['a.browser', 'b', 'c', 'd.browser', 'e'];
    expect(spaceBrowserFiles(sorted, isBrowser, 3)).toEqual(sorted);
  });
});
