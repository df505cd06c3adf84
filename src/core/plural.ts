// Russian forms of "day" after a number, in the genitive that "не длиннее …" takes: 1 дня,
// 31 дня, 2 дней, 11 дней, 90 дней.
export function ruDaysGenitive(n: number): string {
  const form = n % 10 === 1 && n % 100 !== 11 ? "дня" : "дней";
  return `${n} ${form}`;
}
