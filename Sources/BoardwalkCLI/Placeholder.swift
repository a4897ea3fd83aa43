import Boardwalk
