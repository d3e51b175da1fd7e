from torchup.cli.main import console

console()
