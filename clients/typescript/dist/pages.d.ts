/** A list's pages (`{items, next_cursor}`) followed to the end, item by item. */
/** Items per page when the client pages through a list for you. */
export declare const PAGE_SIZE = 200;
export interface Page<T> {
    items: T[];
    next_cursor?: string | null | undefined;
}
export declare function pages<T>(page: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined>;
//# sourceMappingURL=pages.d.ts.map