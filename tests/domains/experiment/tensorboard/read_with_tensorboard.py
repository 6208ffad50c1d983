"""tests/tensorboard/read_with_tensorboard.py LOGDIR -- reads a SummaryWriter
log directory with TensorBoard's own code (the `tensorboard` Python package:
its event accumulator and masked CRC-32C) and prints every record it finds.
Run where `tensorboard` is installed (the GPU machine's /opt/torch/.venv);
the CI test uses the independent decoder tb_decode.py instead. The log dir
comes from tests/tensorboard/write_sample.lua."""
import glob, os, sys
ROOT = sys.argv[1] if len(sys.argv) > 1 else "tbcheck/run1"
from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
import struct, io
try:
    from PIL import Image
except ImportError:
    Image = None

def check_crc(path):
    data = open(path, "rb").read()
    i, n = 0, 0
    while i < len(data):
        length = struct.unpack("<Q", data[i:i + 8])[0]
        lcrc = struct.unpack("<I", data[i + 8:i + 12])[0]
        assert lcrc == masked_crc32c(data[i:i + 8]), "length crc"
        body = data[i + 12:i + 12 + length]
        dcrc = struct.unpack("<I", data[i + 12 + length:i + 16 + length])[0]
        assert dcrc == masked_crc32c(body), "data crc"
        event_pb2.Event.FromString(body)
        i += 16 + length
        n += 1
    return n

for d in sorted([ROOT] + glob.glob(os.path.join(ROOT, "*/"))):
    for f in glob.glob(os.path.join(d, "events.out.tfevents.*")):
        print(f, "records with valid CRCs:", check_crc(f))
acc = ea.EventAccumulator(ROOT, size_guidance={"images": 0, "histograms": 0, "tensors": 0, "scalars": 0})
acc.Reload()
print("tags", acc.Tags())
print("loss", [(e.step, round(e.value, 6)) for e in acc.Scalars("loss")])
h = acc.Histograms("weights")[0]
print("hist step", h.step, "min", h.histogram_value.min, "max", h.histogram_value.max, "num", h.histogram_value.num,
      "sum", round(h.histogram_value.sum, 4))
im = acc.Images("img")[0]
if Image:
    pic = Image.open(io.BytesIO(im.encoded_image_string)).convert("RGB")
    print("image step", im.step, im.width, im.height, pic.getpixel((0, 0)), pic.getpixel((0, 1)))
else:
    print("image step", im.step, im.width, im.height, "png bytes", len(im.encoded_image_string),
          im.encoded_image_string[:8])
t = acc.Tensors("note/text_summary")[0]
print("text step", t.step, t.tensor_proto.string_val)
for sub in sorted(glob.glob(os.path.join(ROOT, "*/"))):
    a2 = ea.EventAccumulator(sub); a2.Reload(); print(sub, a2.Tags().get("scalars"), a2.Tags().get("tensors"))
