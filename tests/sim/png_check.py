#!/usr/bin/env python3
"""Checks a weft-sim PNG plot without any imaging library: the file is a valid PNG (every
chunk's CRC, zlib stream, row filters), of the expected size, mostly white, and has enough
pixels in the first series' colour (#1f77b4) to be a drawn line, not an empty frame.

    png_check.py FILE WIDTH HEIGHT
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0, header
    channels = {2: 3, 6: 4}[colour]  # RGB or RGBA
    raw = zlib.decompress(idat)
    stride = width * channels
    assert len(raw) == height * (stride + 1), "wrong amount of pixel data"
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + a) & 255
            elif kind == 2:
                row[i] = (row[i] + b) & 255
            elif kind == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (row[i] + pred) & 255
            else:
                assert kind == 0, f"filter {kind}"
        rows.append(row)
        prev = row
    return width, height, channels, rows


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    width, height, channels, rows = read_png(path)
    assert (width, height) == (want_w, want_h), (width, height)
    white = blue = 0
    for row in rows:
        for x in range(0, len(row), channels):
            r, g, b = row[x], row[x + 1], row[x + 2]
            white += r > 245 and g > 245 and b > 245
            blue += abs(r - 0x1F) < 24 and abs(g - 0x77) < 24 and abs(b - 0xB4) < 24
    total = width * height
    assert white > total // 2, f"only {white} of {total} pixels are white"
    assert blue > 500, f"only {blue} pixels in the series colour: nothing was drawn"
    print(f"png_check: {width}x{height}, {white} white, {blue} in the series colour")


if __name__ == "__main__":
    main()
