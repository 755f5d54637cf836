// Small helpers shared by the pages.

export function isAbort(error) {
  return error?.name === "AbortError";
}

/** Runs `fn` at most once at a time; a call while it runs makes it run once more after. */
export function coalesce(fn) {
  let running = null;
  let again = false;
  return function run() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await fn();
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  };
}

/** `fn` called once, `ms` after the last of a burst of calls. */
export function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}
