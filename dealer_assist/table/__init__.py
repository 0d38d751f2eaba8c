"""The live table: the loop that turns shoe, camera and dealer inputs into rounds, the dealer's
screen, the table command and the demo table."""
