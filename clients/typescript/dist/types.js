/** The service's shapes under short names (all generated from the OpenAPI document). */
export {};
//# sourceMappingURL=types.js.map