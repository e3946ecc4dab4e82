"""Writes the image corpus of tests/integration/pack_mount_test.cc into a folder.

Odd-but-valid images every loader opens (ok_*) and damaged ones (bad_*), each with a caption
(key.txt) so that the test can check what happens to a bad image's sample. The bad ones sort
before the good ones, so a bad file that disturbed the checks of the files after it shows.
Arithmetic-coded and restart-marker JPEGs are written by the test itself (PIL cannot write them).

usage: make_image_corpus.py DIR
"""
import io
import struct
import sys

import numpy as np
from PIL import Image, ImageCms


def gradient(width, height, channels=3):
    y, x = np.mgrid[0:height, 0:width]
    planes = [(x * 255 // max(1, width - 1)), (y * 255 // max(1, height - 1)), ((x + y) % 256)]
    planes += [np.full_like(x, 200)] * (channels - 3)
    return np.stack(planes[:channels], axis=-1).astype(np.uint8)


def encoded(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def with_frame_size(jpeg, width, height):
    """The same JPEG with its baseline frame header (SOF0) claiming width x height."""
    sof = jpeg.index(b"\xff\xc0")
    return jpeg[: sof + 5] + struct.pack(">HH", height, width) + jpeg[sof + 9:]


def main(folder):
    rgb = Image.fromarray(gradient(64, 48))
    exif = Image.Exif()
    exif[0x010F] = "mmfs test camera"  # Make
    exif[0x0112] = 6  # Orientation: rotated
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    rgba = Image.fromarray(gradient(40, 30, 4), "RGBA")
    sixteen = Image.fromarray((np.arange(32 * 24, dtype=np.uint16).reshape(24, 32) * 85), "I;16")
    files = {
        "ok_progressive.jpg": encoded(rgb, "JPEG", progressive=True, quality=85),
        "ok_cmyk.jpg": encoded(rgb.convert("CMYK"), "JPEG", quality=90),
        "ok_gray.jpg": encoded(rgb.convert("L"), "JPEG"),
        "ok_444.jpg": encoded(rgb, "JPEG", subsampling=0, quality=95),
        "ok_exif_icc.jpg": encoded(rgb, "JPEG", exif=exif.tobytes(), icc_profile=srgb),
        "ok_1x1.jpg": encoded(Image.new("RGB", (1, 1), (255, 0, 0)), "JPEG"),
        "ok_6000x4000.jpg": encoded(Image.fromarray(gradient(6000, 4000)), "JPEG", quality=30),
        "ok_rgba.png": encoded(rgba, "PNG"),
        "ok_palette.png": encoded(rgb.convert("P", palette=Image.ADAPTIVE, colors=16), "PNG"),
        "ok_16bit.png": encoded(sixteen, "PNG"),
        "ok_lossy.webp": encoded(rgb, "WEBP", quality=70),
        "ok_lossless.webp": encoded(rgba, "WEBP", lossless=True),
    }
    baseline = encoded(rgb, "JPEG")
    png = files["ok_rgba.png"]
    webp = files["ok_lossy.webp"]
    files.update({
        "bad_absurd.jpg": with_frame_size(baseline, 65535, 65535),
        "bad_zero_width.jpg": with_frame_size(baseline, 0, 48),
        "bad_empty.jpg": b"",
        "bad_cut.jpg": files["ok_progressive.jpg"][: len(files["ok_progressive.jpg"]) // 2],
        "bad_png_named.jpg": png,  # a wrong extension
        "bad_html.jpg": b"<html><body>404 Not Found</body></html>\n",
        "bad_cut_png.png": png[: len(png) - 30],
        "bad_cut_webp.webp": webp[: len(webp) // 2],
    })
    for name, data in files.items():
        with open(f"{folder}/{name}", "wb") as f:
            f.write(data)
        with open(f"{folder}/{name.split('.')[0]}.txt", "w") as f:
            f.write(f"  caption of {name}  ")
    # The bad ones' names, for the test.
    print(" ".join(sorted(n for n in files if n.startswith("bad_"))))


if __name__ == "__main__":
    main(sys.argv[1])
