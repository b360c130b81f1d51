int main(void)
{
	return 125;
}
