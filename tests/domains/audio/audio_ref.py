#!/usr/bin/python3
"""tests/domains/audio/audio_ref.py -- independent readers of sound files
for test_io.lua: prints a Lua table {[path] = {reader=, sample_rate=,
num_channels=, num_frames=, bits_per_sample=, encoding=, data = {channel
1's samples, channel 2's, ...}}}. `wave` (Python's own module) reads
integer PCM WAV files (data: the raw integers); torchaudio 0.13 (its sox
backend) reads the others and gives their info (data: torchaudio.load's
normalized floats). Usage: audio_ref.py [--info] files..."""
import sys
import wave
import warnings

warnings.filterwarnings("ignore")


def lua_list(xs, fmt):
    return "{" + ",".join(fmt % x for x in xs) + "}"


def by_wave(path):
    with wave.open(path, "rb") as w:
        c, width, sr, n = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
        raw = w.readframes(n)
    vals = []
    for k in range(0, len(raw), width):
        b = raw[k:k + width]
        if width == 1:
            vals.append(b[0])  # unsigned
        else:
            v = int.from_bytes(b, "little", signed=True)
            vals.append(v << (32 - 8 * width) if width == 3 else v)  # 24-bit: left-justified, as torchaudio
    chans = [vals[ch::c] for ch in range(c)]
    return "wave", sr, c, n, [lua_list(ch, "%d") for ch in chans]


def by_torchaudio(path, with_data):
    import torchaudio
    x, sr = torchaudio.load(path) if with_data else (None, 0)
    data = [lua_list(ch.tolist(), "%.9g") for ch in x] if with_data else []
    return "torchaudio", sr, 0, 0, data


def main():
    info_only = sys.argv[1:2] == ["--info"]
    print("return {")
    for path in sys.argv[1 + info_only:]:
        try:
            reader, sr, c, n, data = by_wave(path)
        except (wave.Error, EOFError):
            reader, sr, c, n, data = by_torchaudio(path, not info_only)
        import torchaudio
        m = torchaudio.info(path)
        print("[%r] = {reader=%r, sample_rate=%d, num_channels=%d, num_frames=%d, bits_per_sample=%d, "
              "encoding=%r, data={%s}}," % (path, reader, m.sample_rate, m.num_channels, m.num_frames,
                                            m.bits_per_sample, m.encoding, ",".join(data)))
    print("}")


main()
