import { expect } from "bun:test";

/** Asserts the error envelope, the status, the code and the X-Request-Id header. */
export async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<Record<string, unknown>> {
  const text = await res.text();
  let body: { error?: { code?: string; message?: string; details?: Record<string, unknown> } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(
      `expected a JSON envelope with ${status} ${code}, got ${res.status}: ${text.slice(0, 200)}`,
    );
  }
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  expect(typeof body.error?.message).toBe("string");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(text).not.toContain("    at ");
  return body.error?.details ?? {};
}
