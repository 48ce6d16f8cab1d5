from deepsift.cli import main

main()
