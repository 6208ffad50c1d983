#!/usr/bin/python3
"""tests/domains/audio/stream_ref.py -- torchaudio 0.13's StreamReader
(FFmpeg) driven by its lower level, for test_io.lua: prints a Lua table
{ready0 =, first =, fill = {{chunk, ...} per pop_chunks}, all = {...},
codes = {...}}, each chunk {frames =, data = {channel-major samples}} or
false (torchaudio's None). Usage: stream_ref.py FILE"""
import sys
import warnings

warnings.filterwarnings("ignore")

from torchaudio.io import StreamReader  # noqa: E402


def lua_chunk(c):
    if c is None:
        return "false"
    data = ",".join("%.9g" % v for v in c.t().reshape(-1).tolist())
    return "{frames=%d,data={%s}}" % (c.shape[0], data)


def lua_pops(pops):
    return "{" + ",".join("{" + ",".join(lua_chunk(c) for c in p) + "}" for p in pops) + "}"


def main(path):
    out = []
    # fill_buffer / pop_chunks in turn, buffers large enough for a packet
    r = StreamReader(path)
    r.add_basic_audio_stream(frames_per_chunk=300, buffer_chunk_size=8)
    r.add_basic_audio_stream(frames_per_chunk=1000, buffer_chunk_size=3, format="s16")
    out.append("ready0=%s" % ("true" if r.is_buffer_ready() else "false"))
    out.append("first=" + lua_pops([r.pop_chunks()]))
    pops, codes = [], []
    while True:
        code = r._fill_buffer(None, 10.0)
        codes.append(code)
        if code:
            break
        pops.append(r.pop_chunks())
    while True:
        c = r.pop_chunks()
        if all(x is None for x in c):
            break
        pops.append(c)
    out.append("fill=" + lua_pops(pops))
    out.append("codes={%s}" % ",".join(str(c) for c in codes))
    # process_all_packets into a buffer of 2 chunks: the oldest are dropped
    r = StreamReader(path)
    r.add_basic_audio_stream(frames_per_chunk=300, buffer_chunk_size=2)
    r.process_all_packets()
    pops = []
    while True:
        c = r.pop_chunks()
        pops.append(c)
        if c[0] is None:
            break
    out.append("all=" + lua_pops(pops))
    print("return {" + ",\n".join(out) + "}")


if __name__ == "__main__":
    main(sys.argv[1])
