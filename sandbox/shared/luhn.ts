/**
 * The Luhn (mod 10) check digit that completes `partial` (a string of digits).
 *
 * @example luhnCheckDigit('7992739871') // => 3
 */
export function luhnCheckDigit(partial: string): number {
  let sum = 0;
  // Walking from the right, the digit next to the (future) check digit is doubled first.
  for (let i = 0; i < partial.length; i += 1) {
    let digit = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

/** True when `digits` is all decimal digits and its last digit is the Luhn check digit. */
export function isLuhnValid(digits: string): boolean {
  if (!/^[0-9]{2,}$/.test(digits)) return false;
  return luhnCheckDigit(digits.slice(0, -1)) === Number(digits[digits.length - 1]);
}
