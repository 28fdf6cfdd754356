from stackbench.cli import main

main()
