"""The user's own stack -> a matrix (`ecoready init`): services read from a compose file, a
running engine or an image list, mapped onto probe kinds and written as TOML. Pure."""
