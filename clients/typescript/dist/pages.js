/** A list's pages (`{items, next_cursor}`) followed to the end, item by item. */
/** Items per page when the client pages through a list for you. */
export const PAGE_SIZE = 200;
export async function* pages(page) {
    let cursor;
    do {
        const answer = await page(cursor);
        yield* answer.items;
        cursor = answer.next_cursor ?? undefined;
    } while (cursor);
}
//# sourceMappingURL=pages.js.map