/** A list's pages (`{items, next_cursor}`) followed to the end, item by item. */

/** Items per page when the client pages through a list for you. */
export const PAGE_SIZE = 200;

export interface Page<T> {
  items: T[];
  next_cursor?: string | null | undefined;
}

export async function* pages<T>(
  page: (cursor: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    yield* answer.items;
    cursor = answer.next_cursor ?? undefined;
  } while (cursor);
}
