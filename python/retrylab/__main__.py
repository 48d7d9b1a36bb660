"""python -m retrylab: the same as the retrylab command."""

from retrylab import main

if __name__ == "__main__":
    main()
