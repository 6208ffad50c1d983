-- torch.audio.datasets -- torchaudio's datasets over local files (nothing
-- is downloaded): YESNO, SPEECHCOMMANDS, AudioFolder (sound files in one
-- folder per class, as vision's DatasetFolder) and SpokenDigits (what
-- scripts/audio/make_spoken_digits.lua synthesizes). Samples are tables in
-- the order of torchaudio's tuples; class indices are 1-based.
local AudioFolder = require "torch.audio.datasets.folder"
return {
  __help = "torch.audio.datasets: AudioFolder, YESNO, SPEECHCOMMANDS, SpokenDigits (local files; samples as tables)",
  AudioFolder = AudioFolder,
  AUDIO_EXTENSIONS = AudioFolder.AUDIO_EXTENSIONS,
  YESNO = require "torch.audio.datasets.yesno",
  SPEECHCOMMANDS = require "torch.audio.datasets.speechcommands",
  SpokenDigits = require "torch.audio.datasets.spoken_digits",
}
