-- torch.audio.transforms._spectral -- placeholder until stft lands
return {}
