/**
 * `true` only when A and B are the same type, both ways; a constant typed `Same<A, B> = true`
 * fails to compile once they drift apart (a record type and its schema, a row type and its table).
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
