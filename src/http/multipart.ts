// Streams a multipart/form-data request body through busboy, counting bytes as they arrive: the
// first chunk past the limit cancels the body and answers 413, so nothing over the limit is
// ever held in memory. Text fields and files come back as plain values.
import { createHash } from "node:crypto";
import busboy from "busboy";
import { ApiError, invalidRequestBody, validationError } from "../core/errors";
import { isUuid } from "../core/ids";
import { limitedChunks, payloadTooLarge } from "./body-policy";

export interface MultipartFile {
  filename: string;
  bytes: Uint8Array;
  /** SHA-256 of the bytes (hex), computed as they arrived. */
  sha256: string;
}

export interface MultipartForm {
  fields: Map<string, string>;
  files: Map<string, MultipartFile>;
}

const MAX_FIELDS = 20;
const MAX_FIELD_BYTES = 4096;

export async function readMultipart(request: Request, limit: number): Promise<MultipartForm> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw validationError(
      "content-type",
      "Ожидается тело multipart/form-data с полями bank_account_id и file",
    );
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { "content-type": contentType },
      limits: {
        fields: MAX_FIELDS,
        fieldSize: MAX_FIELD_BYTES,
        files: 2,
        fileSize: limit,
        parts: MAX_FIELDS + 2,
      },
    });
  } catch {
    throw invalidRequestBody();
  }

  const form: MultipartForm = { fields: new Map(), files: new Map() };
  let failure: ApiError | null = null;
  const fail = (e: ApiError) => {
    failure ??= e;
  };

  parser.on("field", (name, value, info) => {
    if (info.valueTruncated) fail(validationError(name, `Поле ${name} слишком длинное`));
    else if (!form.fields.has(name)) form.fields.set(name, value);
  });
  parser.on("file", (name, stream, info) => {
    const chunks: Buffer[] = [];
    const hash = createHash("sha256");
    // A cut or malformed body also errors the part's stream; the parser's own error reports it.
    stream.on("error", () => {});
    stream.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      hash.update(chunk);
    });
    stream.on("limit", () => fail(payloadTooLarge(limit)));
    stream.on("close", () => {
      if (form.files.has(name)) {
        fail(validationError(name, `Ожидается один файл в поле ${name}`));
        return;
      }
      form.files.set(name, {
        filename: info.filename ?? "",
        bytes: Buffer.concat(chunks),
        sha256: hash.digest("hex"),
      });
    });
  });
  parser.on("fieldsLimit", () => fail(validationError("body", "Слишком много полей формы")));
  parser.on("partsLimit", () => fail(validationError("body", "Слишком много частей формы")));
  parser.on("filesLimit", () => fail(validationError("file", "Ожидается один файл")));

  const finished = new Promise<void>((resolve, reject) => {
    parser.on("close", () => resolve());
    parser.on("error", (err) => reject(err));
  });
  // Keep the promise observed even when we stop early (413) and never await it.
  finished.catch(() => {});

  try {
    for await (const chunk of limitedChunks(request, limit)) {
      if (!parser.write(chunk)) {
        await new Promise<void>((resolve) => parser.once("drain", () => resolve()));
      }
      if (failure) throw failure;
    }
    parser.end();
    await finished;
  } catch (e) {
    parser.destroy();
    if (e instanceof ApiError) throw e;
    // busboy reports malformed multipart (missing boundary, truncated part) as an error.
    throw invalidRequestBody({ reason: "malformed multipart body" });
  }
  if (failure) throw failure;
  return form;
}

/** A required uuid field of a form, lower-cased: malformed is "invalid request body", absent a validation error. */
export function uuidField(form: MultipartForm, name: string): string {
  const value = form.fields.get(name)?.trim();
  if (value !== undefined && value !== "" && !isUuid(value)) throw invalidRequestBody({ field: name });
  if (value === undefined || value === "") throw validationError(name, `Поле ${name} обязательно`);
  return value.toLowerCase();
}

/** A required file of a form. */
export function fileField(form: MultipartForm, name: string, what: string): MultipartFile {
  const file = form.files.get(name);
  if (file === undefined) throw validationError(name, `Поле ${name} (${what}) обязательно`);
  return file;
}
