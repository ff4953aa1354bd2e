"use strict";
// text(), image(), generatedImage() and notify(): validation and normalization happen here;
// the natives only append an item to the cell's output. Every helper returns undefined.

const IMAGE_EXPECTS =
  "image expects a non-empty image URL string, an object with image_url and optional detail, or a raw MCP image block";
const IMAGE_DETAILS = ["auto", "low", "high", "original"];

function normalizeDetail(detail) {
  if (typeof detail !== "string") {
    throw "image detail must be a string when provided";
  }
  const lowered = lowerCase(detail);
  for (let i = 0; i < IMAGE_DETAILS.length; i++) {
    if (IMAGE_DETAILS[i] === lowered) {
      return lowered;
    }
  }
  throw "image detail must be one of: auto, low, high, original";
}

// [url, detail] for image(value, detailArgument).
function normalizeImage(value, detailArgument) {
  let url;
  let detail;
  if (typeof value === "string") {
    url = value;
  } else if (value !== null && typeof value === "object" && !ArrayIsArray(value)) {
    if (typeof value.image_url === "string") {
      url = value.image_url;
      detail = value.detail;
    } else if (typeof value.type === "string") {
      if (value.type !== "image") {
        throw `image only accepts MCP image blocks, got ${JSONStringify(value.type)}`;
      }
      const data = value.data;
      if (typeof data !== "string" || data === "") {
        throw IMAGE_EXPECTS;
      }
      let mime = value.mimeType;
      if (typeof mime !== "string" || mime === "") {
        mime = value.mime_type;
      }
      if (typeof mime !== "string" || mime === "") {
        mime = "application/octet-stream";
      }
      url = startsWith(data, "data:") ? data : `data:${mime};base64,${data}`;
      const meta = value._meta;
      if (meta !== null && typeof meta === "object") {
        detail = meta["codex/imageDetail"];
      }
    }
  }
  if (typeof url !== "string" || url === "") {
    throw IMAGE_EXPECTS;
  }
  if (detailArgument !== undefined && detailArgument !== null) {
    detail = detailArgument;
  }
  detail = detail === undefined || detail === null ? "high" : normalizeDetail(detail);
  const scheme = lowerCase(url);
  if (startsWith(scheme, "http://") || startsWith(scheme, "https://")) {
    throw "Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead";
  }
  if (!startsWith(scheme, "data:")) {
    throw "Tool call failed: invalid image output. Pass a base64 data URI instead";
  }
  return [url, detail];
}

function makeOutputHelpers(natives) {
  function text(value) {
    natives.op_text(toText(value));
  }

  function image(value, detail) {
    const normalized = normalizeImage(value, detail);
    natives.op_image(normalized[0], normalized[1]);
  }

  function generatedImage(result) {
    if (result === null || typeof result !== "object" || ArrayIsArray(result)) {
      throw "generatedImage expects an image generation result object";
    }
    const normalized = normalizeImage(result, undefined);
    const hint = result.output_hint;
    if (hint !== undefined && hint !== null && typeof hint !== "string") {
      throw "generatedImage output_hint must be a string when provided";
    }
    natives.op_image(normalized[0], normalized[1]);
    if (typeof hint === "string") {
      natives.op_text(hint);
    }
  }

  function notify(value) {
    const message = toText(value);
    if (trim(message) === "") {
      throw "notify expects non-empty text";
    }
    natives.op_notify(message);
  }

  return { text, image, generatedImage, notify };
}
