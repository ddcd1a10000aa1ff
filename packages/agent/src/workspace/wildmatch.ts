/**
 * git's `wildmatch` (wildmatch.c), ported byte for byte so ignore files mean here exactly what they
 * mean to git (WS-7): it works on UTF-8 bytes (`?` matches one byte, as in git), `*` and `?` never
 * match `/` under `pathname`, `**` between slashes (or at an end) matches across directories,
 * `[...]` sets with `!`/`^` negation, ranges, backslash escapes and POSIX `[:class:]` names (ASCII
 * only, as git's are). The differential test against `git check-ignore` is its reference.
 */

const MATCH = 0;
const NOMATCH = 1;
const ABORT_ALL = -1;
const ABORT_TO_STARSTAR = -2;

const SLASH = 0x2f;
const STAR = 0x2a;
const BACKSLASH = 0x5c;
const QUESTION = 0x3f;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const BANG = 0x21;
const CARET = 0x5e;
const DASH = 0x2d;
const COLON = 0x3a;

function isGlobSpecial(c: number): boolean {
  return c === STAR || c === QUESTION || c === LBRACKET || c === BACKSLASH;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isUpper = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isLower = (c: number): boolean => c >= 0x61 && c <= 0x7a;
const isAlpha = (c: number): boolean => isUpper(c) || isLower(c);
const isSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);
const isPrint = (c: number): boolean => c >= 0x20 && c <= 0x7e;
const CLASSES: Readonly<Record<string, (c: number) => boolean>> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: isAlpha,
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: isDigit,
  graph: (c) => c > 0x20 && c <= 0x7e,
  lower: isLower,
  print: isPrint,
  punct: (c) => c > 0x20 && c <= 0x7e && !isAlpha(c) && !isDigit(c),
  space: isSpace,
  upper: isUpper,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

/** Reads byte `i` of `a`, 0 past its end (C strings end in NUL; ignore files and paths hold none). */
function at(a: Uint8Array, i: number): number {
  return i < a.length ? (a[i] as number) : 0;
}

function indexOfSlash(t: Uint8Array, from: number): number {
  for (let i = from; i < t.length; i++) if (t[i] === SLASH) return i;
  return -1;
}

function dowild(p: Uint8Array, pi: number, t: Uint8Array, ti: number, pathname: boolean): number {
  const pstart = pi;
  for (; pi < p.length; ti++, pi++) {
    let pch = p[pi] as number;
    let tch = at(t, ti);
    if (ti >= t.length && pch !== STAR) return ABORT_ALL;
    switch (pch) {
      case BACKSLASH:
        // A literal match with the next character (a trailing backslash matches nothing).
        pch = at(p, ++pi);
        if (tch !== pch) return NOMATCH;
        continue;
      case QUESTION:
        if (pathname && tch === SLASH) return NOMATCH;
        continue;
      case STAR: {
        let matchSlash: boolean;
        if (at(p, ++pi) === STAR) {
          const prev = pi - 2;
          while (at(p, ++pi) === STAR) {}
          const next = at(p, pi);
          if ((prev < pstart || p[prev] === SLASH) && (next === 0 || next === SLASH || (next === BACKSLASH && at(p, pi + 1) === SLASH))) {
            // "**/" may match nothing: try the rest of the pattern here first.
            if (next === SLASH && dowild(p, pi + 1, t, ti, pathname) === MATCH) return MATCH;
            matchSlash = true;
          } else matchSlash = !pathname;
        } else matchSlash = !pathname;
        if (pi >= p.length) {
          // A trailing "**" matches everything; a trailing "*" only what has no more slashes.
          if (!matchSlash && indexOfSlash(t, ti) >= 0) return NOMATCH;
          return MATCH;
        }
        if (!matchSlash && p[pi] === SLASH) {
          // One star followed by a slash matches the next directory name.
          const slash = indexOfSlash(t, ti);
          if (slash < 0) return NOMATCH;
          ti = slash; // the slash is consumed by the loop
          break;
        }
        for (;;) {
          if (ti >= t.length) break;
          const lit = at(p, pi);
          if (!isGlobSpecial(lit)) {
            // Advance to the next occurrence of the literal that follows the star.
            while (ti < t.length) {
              tch = t[ti] as number;
              if (!matchSlash && tch === SLASH) break;
              if (tch === lit) break;
              ti++;
            }
            tch = at(t, ti);
            if (tch !== lit) return matchSlash ? ABORT_ALL : ABORT_TO_STARSTAR;
          }
          const matched = dowild(p, pi, t, ti, pathname);
          if (matched !== NOMATCH) {
            if (!matchSlash || matched !== ABORT_TO_STARSTAR) return matched;
          } else if (!matchSlash && tch === SLASH) return ABORT_TO_STARSTAR;
          tch = at(t, ++ti);
        }
        return ABORT_ALL;
      }
      case LBRACKET: {
        pch = at(p, ++pi);
        if (pch === CARET) pch = BANG;
        const negated = pch === BANG;
        if (negated) pch = at(p, ++pi);
        let prevCh = 0;
        let matched = false;
        do {
          if (pch === 0) return ABORT_ALL;
          if (pch === BACKSLASH) {
            pch = at(p, ++pi);
            if (pch === 0) return ABORT_ALL;
            if (tch === pch) matched = true;
          } else if (pch === DASH && prevCh !== 0 && at(p, pi + 1) !== 0 && at(p, pi + 1) !== RBRACKET) {
            pch = at(p, ++pi);
            if (pch === BACKSLASH) {
              pch = at(p, ++pi);
              if (pch === 0) return ABORT_ALL;
            }
            if (tch <= pch && tch >= prevCh) matched = true;
            pch = 0; // makes prevCh 0: a range cannot start another range
          } else if (pch === LBRACKET && at(p, pi + 1) === COLON) {
            pi += 2;
            const s = pi;
            while (at(p, pi) !== 0 && at(p, pi) !== RBRACKET) pi++;
            pch = at(p, pi);
            if (pch === 0) return ABORT_ALL;
            const len = pi - s - 1;
            if (len < 0 || at(p, pi - 1) !== COLON) {
              // No ":]": the "[" is an ordinary member of the set.
              pi = s - 2;
              pch = LBRACKET;
              if (tch === pch) matched = true;
              prevCh = pch;
              pch = at(p, ++pi);
              continue;
            }
            const name = String.fromCharCode(...p.subarray(s, s + len));
            const test = Object.hasOwn(CLASSES, name) ? CLASSES[name] : undefined;
            if (test === undefined) return ABORT_ALL; // a malformed [:class:]
            if (tch < 0x80 && test(tch)) matched = true;
            pch = 0;
          } else if (tch === pch) matched = true;
          prevCh = pch;
          pch = at(p, ++pi);
        } while (pch !== RBRACKET);
        if (matched === negated || (pathname && tch === SLASH)) return NOMATCH;
        continue;
      }
      default:
        if (tch !== pch) return NOMATCH;
        continue;
    }
  }
  return ti < t.length ? NOMATCH : MATCH;
}

/**
 * True when `text` matches `pattern` (both UTF-8 bytes). With `pathname`, `*`, `?` and sets do
 * not match `/`; without it (git's basename matching) they do.
 */
export function wildmatch(pattern: Uint8Array, text: Uint8Array, pathname: boolean): boolean {
  return dowild(pattern, 0, text, 0, pathname) === MATCH;
}
