from torchup.cli import console

console()
