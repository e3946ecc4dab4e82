"""The view quality test's Python side (tests/tools/view_quality_test.cc).

  view_quality.py make DIR N    writes N images of mixed kinds into DIR (photo-like content:
                                smooth colour fields, shapes, grain), deterministic
  view_quality.py check ORIG VIEW OUT.json
                                for each file in VIEW, its original in ORIG (same name): the
                                view decodes, keeps mode, EXIF orientation and ICC profile, and
                                its PSNR against PIL's own Image.resize(size, LANCZOS) of the
                                original; one JSON record per file in OUT.json

The PSNR is taken on what a loader sees: palette images as RGB(A) (PIL resizes "P" with NEAREST,
so the reference converts first), alpha images premultiplied (transparent pixels have no
colour), CMYK and 16-bit as they are. Orientation is not applied on either side: a view stores
the pixels as the original does and keeps its orientation tag, so exif_transpose acts alike.
"""
import io
import json
import math
import os
import random
import sys

import numpy as np
from PIL import Image, ImageCms, ImageDraw, ImageFilter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import make_image_corpus  # noqa: E402  (reused: encoded())

KINDS = ["baseline", "progressive", "gray", "cmyk", "exif_rotated", "rgba_png", "palette_png",
         "lossy_webp", "lossless_webp"]


def photo(rng, width, height):
    """Smooth colour fields + shapes + grain: resizing it is neither trivial nor pure noise."""
    small = rng.integers(0, 256, size=(max(2, height // 40), max(2, width // 40), 3), dtype=np.uint8)
    image = Image.fromarray(small).resize((width, height), Image.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
        x1, y1 = x0 + int(rng.integers(10, width // 2)), y0 + int(rng.integers(10, height // 2))
        colour = tuple(int(c) for c in rng.integers(0, 256, size=3))
        if rng.integers(0, 2):
            draw.ellipse([x0, y0, x1, y1], fill=colour)
        else:
            draw.line([x0, y0, x1, y1], fill=colour, width=int(rng.integers(1, 6)))
    image = image.filter(ImageFilter.GaussianBlur(0.7))
    grain = rng.normal(0, 4, size=(height, width, 3))
    return Image.fromarray(np.clip(np.asarray(image, dtype=np.float64) + grain, 0, 255).astype(np.uint8))


def make(folder, count):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(18)
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    enc = make_image_corpus.encoded
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        width, height = int(rng.integers(300, 700)), int(rng.integers(300, 700))
        rgb = photo(rng, width, height)
        if kind == "baseline":
            name, data = f"{i:04d}_{kind}.jpg", enc(rgb, "JPEG", quality=90, icc_profile=srgb)
        elif kind == "progressive":
            name, data = f"{i:04d}_{kind}.jpg", enc(rgb, "JPEG", quality=85, progressive=True)
        elif kind == "gray":
            name, data = f"{i:04d}_{kind}.jpg", enc(rgb.convert("L"), "JPEG", quality=90)
        elif kind == "cmyk":
            name, data = f"{i:04d}_{kind}.jpg", enc(rgb.convert("CMYK"), "JPEG", quality=90)
        elif kind == "exif_rotated":
            exif = Image.Exif()
            exif[0x010F] = "mmfs test camera"
            exif[0x0112] = [3, 6, 8][i % 3]
            name, data = f"{i:04d}_{kind}.jpg", enc(rgb, "JPEG", quality=90, exif=exif.tobytes())
        elif kind == "rgba_png":
            alpha = Image.fromarray(np.asarray(photo(rng, width, height).convert("L")))
            rgba = rgb.copy()
            rgba.putalpha(alpha)
            name, data = f"{i:04d}_{kind}.png", enc(rgba, "PNG")
        elif kind == "palette_png":
            name, data = f"{i:04d}_{kind}.png", enc(rgb.quantize(64), "PNG")
        elif kind == "lossy_webp":
            name, data = f"{i:04d}_{kind}.webp", enc(rgb, "WEBP", quality=85)
        else:
            name, data = f"{i:04d}_{kind}.webp", enc(rgb, "WEBP", lossless=True)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        with open(os.path.join(folder, name.split(".")[0] + ".txt"), "w") as f:
            f.write(f"a caption for {name}\n")


def comparable(image):
    """An array of what a loader sees, and the peak value."""
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    if image.mode in ("I;16", "I;16B", "I"):
        return np.asarray(image.convert("I"), dtype=np.float64), 65535.0
    a = np.asarray(image, dtype=np.float64)
    if image.mode in ("RGBA", "LA"):
        a = np.concatenate([a[..., :-1] * a[..., -1:] / 255.0, a[..., -1:]], axis=-1)
    return a, 255.0


def reference(original, size):
    if original.mode == "P":
        original = original.convert("RGBA" if "transparency" in original.info else "RGB")
    if original.mode in ("I;16", "I;16B"):
        original = original.convert("I")
    return original.resize(size, Image.LANCZOS)


def psnr(a, b, peak):
    mse = float(np.mean((a - b) ** 2))
    return 99.0 if mse == 0 else 10 * math.log10(peak * peak / mse)


def check(orig_dir, view_dir, out_path):
    records = []
    for name in sorted(os.listdir(view_dir)):
        rec = {"name": name, "problems": []}
        try:
            original = Image.open(os.path.join(orig_dir, name))
            original.load()
            view = Image.open(os.path.join(view_dir, name))
            view.load()
            rec["format"] = view.format
            rec["size"] = list(view.size)
            if view.format != original.format:
                rec["problems"].append(f"format {view.format}, the original is {original.format}")
            want_mode = {"P": ("RGB", "RGBA")}.get(original.mode, (original.mode,))
            if view.mode not in want_mode:
                rec["problems"].append(f"mode {view.mode}, the original is {original.mode}")
            if min(view.size) > min(original.size):
                rec["problems"].append("upscaled")
            # libvips 8.14 writes an EXIF block into every JPEG/WebP it saves, orientation 1
            # (upright) when the source had none: the same for exif_transpose as no tag.
            for what, get in (("EXIF orientation", lambda im: im.getexif().get(0x0112, 1)),
                              ("ICC profile", lambda im: im.info.get("icc_profile"))):
                if get(view) != get(original):
                    rec["problems"].append(f"{what} not kept")
            ref, peak = comparable(reference(original, view.size))
            got, _ = comparable(view)
            if got.shape != ref.shape:
                rec["problems"].append(f"shape {got.shape}, reference {ref.shape}")
            else:
                rec["psnr"] = psnr(got, ref, peak)
        except Exception as e:  # a file that does not decode is a finding, not a crash
            rec["problems"].append(f"{type(e).__name__}: {e}")
        records.append(rec)
    with open(out_path, "w") as f:
        json.dump(records, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: view_quality.py make DIR N | check ORIG VIEW OUT.json")
