// Russian forms of "day" after a number, in the genitive that "не длиннее …" takes: 1 дня,
// 31 дня, 2 дней, 11 дней, 90 дней.
export function ruDaysGenitive(n: number): string {
  const form = n % 10 === 1 && n % 100 !== 11 ? "дня" : "дней";
  return `${n} ${form}`;
}

/** The Russian form of a noun after `n`: ruPlural(1, …) "операция", 3 "операции", 5 and 11 "операций". */
export function ruPlural(n: number, one: string, few: string, many: string): string {
  const tens = n % 100;
  const units = n % 10;
  if (tens >= 11 && tens <= 14) return many;
  if (units === 1) return one;
  if (units >= 2 && units <= 4) return few;
  return many;
}
